import { createSchemaChecker } from '../../plugins-sdk';

export type OutputVerdict = { ok: true; json: string } | { ok: false; notJson: boolean; problems: string };

/** Output schemas only (their own instance: a plugin's output schema never meets a tool's). */
const outputSchemas = createSchemaChecker();

/**
 * The schema gate of a runtime with `output.schema`: the reply must be one JSON value (a code fence
 * around it is tolerated) that the schema accepts. A valid output is its JSON text as parsed and
 * written again (the runtime's structured output).
 */
export function validateOutput(text: string, schema: Record<string, unknown>): OutputVerdict {
  let value: unknown;
  try {
    value = JSON.parse(unfenced(text));
  } catch {
    return { ok: false, notJson: true, problems: 'not JSON' };
  }
  const verdict = outputSchemas.check(schema, value);
  if (verdict.ok) return { ok: true, json: JSON.stringify(value) };
  return { ok: false, notJson: false, problems: verdict.messages.join('; ') || 'does not match' };
}

function unfenced(text: string): string {
  const m = /^\s*```(?:json)?\s*\n([\s\S]*?)\n\s*```\s*$/.exec(text);
  return m ? m[1] : text;
}
