import Ajv from 'ajv';

export type OutputVerdict = { ok: true; json: string } | { ok: false; notJson: boolean; problems: string };

const ajv = new Ajv({ allErrors: true });
const compiled = new WeakMap<Record<string, unknown>, Ajv.ValidateFunction>();

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
  let validate = compiled.get(schema);
  if (!validate) compiled.set(schema, (validate = ajv.compile(schema)));
  if (validate(value)) return { ok: true, json: JSON.stringify(value) };
  const problems = (validate.errors ?? []).map((e) => `${e.dataPath || '(root)'} ${e.message ?? 'is invalid'}`).join('; ');
  return { ok: false, notJson: false, problems: problems || 'does not match' };
}

function unfenced(text: string): string {
  const m = /^\s*```(?:json)?\s*\n([\s\S]*?)\n\s*```\s*$/.exec(text);
  return m ? m[1] : text;
}
