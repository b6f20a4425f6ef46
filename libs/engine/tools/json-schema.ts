import Ajv from 'ajv';

/**
 * JSON schemas of tool parameters and event payloads, checked with ajv (draft-07). A schema ajv
 * cannot compile (an unknown `$schema`, a `$ref` to nothing, an invalid keyword value) is
 * "unreadable": its topic or tool shows an unavailable marker instead of a shape.
 */
export type SchemaCheck = { ok: true } | { ok: false; messages: string[] };

type Compiled = { validate: Ajv.ValidateFunction } | { error: string };

const compiled = new WeakMap<object, Compiled>();

function compile(schema: Record<string, unknown>): Compiled {
  let entry = compiled.get(schema);
  if (!entry) {
    // one ajv per schema: two plugins' schemas may share an `$id` without clashing
    const ajv = new Ajv({ allErrors: true, jsonPointers: true, unknownFormats: 'ignore', missingRefs: true });
    try {
      entry = { validate: ajv.compile(schema) };
    } catch (error) {
      entry = { error: error instanceof Error ? error.message : String(error) };
    }
    compiled.set(schema, entry);
  }
  return entry;
}

/** Whether ajv can compile the schema. */
export function isReadableSchema(schema: Record<string, unknown>): boolean {
  return 'validate' in compile(schema);
}

/** ajv's English message for one error, with where it is (`/a/0`, `(root)`). */
function describe(error: Ajv.ErrorObject): string {
  const where = error.dataPath || '(root)';
  const params = error.params as Record<string, unknown>;
  const extra =
    error.keyword === 'additionalProperties'
      ? ` (${String(params.additionalProperty)})`
      : error.keyword === 'enum' && Array.isArray(params.allowedValues)
        ? `: ${params.allowedValues.map((v) => JSON.stringify(v)).join(', ')}`
        : '';
  return `${where}: ${error.message ?? error.keyword}${extra}`;
}

/** Checks `value` against `schema`; an unreadable schema fails with the compile error. */
export function checkSchema(schema: Record<string, unknown>, value: unknown): SchemaCheck {
  const entry = compile(schema);
  if ('error' in entry) return { ok: false, messages: [`the schema cannot be read: ${entry.error}`] };
  if (entry.validate(value)) return { ok: true };
  return { ok: false, messages: (entry.validate.errors ?? []).map(describe) };
}

/** Whether a schema uses references (`$ref`, `$defs`, `definitions`) anywhere. */
export function usesReferences(schema: unknown): boolean {
  if (Array.isArray(schema)) return schema.some(usesReferences);
  if (schema === null || typeof schema !== 'object') return false;
  return Object.entries(schema).some(([k, v]) => k === '$ref' || k === '$defs' || k === 'definitions' || usesReferences(v));
}
