import { signReasoning, verifyReasoning } from './reasoning';

type Part = {
  text?: string;
  thought?: boolean;
  thoughtSignature?: unknown;
  functionCall?: { name: string; id?: unknown; args?: unknown };
  functionResponse?: { name: string; id?: unknown };
};
type Content = { role: string; parts: Part[] };

/** What a thought signature signs: the function call, or the text of its part. */
const signedPayload = (p: Part) => (p.functionCall ? JSON.stringify({ name: p.functionCall.name, args: p.functionCall.args ?? {} }) : (p.text ?? ''));

export function signPart<T extends Part>(part: T): T {
  return { ...part, thoughtSignature: signReasoning('gemini', signedPayload(part)) };
}

/**
 * Thinking, as the request sets it: a budget above 0, thoughts asked for, or a Gemini 3 model (it
 * cannot be turned off there, and its function calls always come with signatures).
 */
export function geminiThinking(model: string, generationConfig: unknown): boolean {
  const tc = (generationConfig as { thinkingConfig?: { thinkingBudget?: unknown; includeThoughts?: unknown } } | undefined)?.thinkingConfig;
  if (/^gemini-3/.test(model)) return true;
  if (tc?.thinkingBudget === 0) return false;
  return (typeof tc?.thinkingBudget === 'number' && tc.thinkingBudget !== 0) || tc?.includeThoughts === true || /^gemini-3/.test(model);
}

/**
 * What generateContent rejects in a tool loop: function responses that do not answer the calls of
 * the model turn before them, a thought signature that does not verify (changed), and on Gemini 3 a
 * function call of the current turn sent back without its signature. Null: accepted.
 */
export function geminiLoopError(model: string, contents: readonly Content[]): string | null {
  const lastUserText = contents.map((c) => c.role === 'user' && c.parts.some((p) => p.text !== undefined)).lastIndexOf(true);
  for (let i = 0; i < contents.length; i++) {
    const c = contents[i];
    const responses = c.parts.flatMap((p) => (p.functionResponse ? [p.functionResponse] : []));
    if (responses.length) {
      const calls = (contents[i - 1]?.parts ?? []).flatMap((p) => (p.functionCall ? [p.functionCall] : []));
      if (calls.length !== responses.length) {
        return 'Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn.';
      }
      for (const r of responses) {
        const matched = calls.some((call) => call.name === r.name && (call.id === undefined || r.id === undefined || call.id === r.id));
        if (!matched) return `Function response "${r.name}" does not answer a function call of the previous turn.`;
      }
    }
    if (c.role !== 'model') continue;
    let firstCall = true;
    for (let j = 0; j < c.parts.length; j++) {
      const p = c.parts[j];
      if (p.thoughtSignature !== undefined && !verifyReasoning('gemini', signedPayload(p), p.thoughtSignature)) return 'Corrupted thought signature.';
      if (p.functionCall && firstCall) {
        firstCall = false;
        if (/^gemini-3/.test(model) && i > lastUserText && p.thoughtSignature === undefined) {
          return `Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly, and missing thought_signature may lead to degraded model performance. Additional data, function call \`default_api:${p.functionCall.name}\` , position ${j + 1}.`;
        }
      }
    }
  }
  return null;
}

/** The fields of Gemini's OpenAPI `Schema` message (a function declaration's `parameters`). */
const SCHEMA_FIELDS = new Set([
  'type',
  'format',
  'title',
  'description',
  'nullable',
  'enum',
  'maxItems',
  'minItems',
  'properties',
  'required',
  'minProperties',
  'maxProperties',
  'minLength',
  'maxLength',
  'pattern',
  'example',
  'anyOf',
  'propertyOrdering',
  'default',
  'items',
  'minimum',
  'maximum',
]);

/** The first keyword of `schema` the `Schema` message has no field for, with its proto path; null: none. */
function unknownSchemaField(schema: unknown, path: string): string | null {
  if (!schema || typeof schema !== 'object' || Array.isArray(schema)) return null;
  for (const [key, value] of Object.entries(schema as Record<string, unknown>)) {
    if (!SCHEMA_FIELDS.has(key)) return `Invalid JSON payload received. Unknown name "${key}" at '${path}': Cannot find field.`;
    const nested =
      key === 'properties' && value && typeof value === 'object'
        ? Object.values(value).map((v, i) => unknownSchemaField(v, `${path}.properties[${i}].value`))
        : key === 'anyOf' && Array.isArray(value)
          ? value.map((v, i) => unknownSchemaField(v, `${path}.any_of[${i}]`))
          : key === 'items'
            ? [unknownSchemaField(value, `${path}.items`)]
            : [];
    const found = nested.find((e) => e !== null);
    if (found) return found;
  }
  return null;
}

/**
 * What generateContent rejects in function declarations: `parameters` is the OpenAPI `Schema`
 * message, so a JSON Schema keyword it has no field for (`const`, `additionalProperties`, `$ref`,
 * `oneOf` …) fails the request; `parametersJsonSchema` takes JSON Schema as it is (the adapter's
 * field); both at once are refused. Null: accepted.
 */
export function geminiDeclarationError(tools: readonly { functionDeclarations?: readonly Record<string, unknown>[] }[]): string | null {
  for (const [i, tool] of tools.entries()) {
    for (const [j, d] of (tool.functionDeclarations ?? []).entries()) {
      const path = `tools[${i}].function_declarations[${j}]`;
      if (d.parameters !== undefined && d.parametersJsonSchema !== undefined) {
        return `${path}: parameters and parameters_json_schema are mutually exclusive; only one may be set.`;
      }
      const unknown = unknownSchemaField(d.parameters, `${path}.parameters`);
      if (unknown) return unknown;
    }
  }
  return null;
}
