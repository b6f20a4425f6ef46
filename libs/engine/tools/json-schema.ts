import { createSchemaChecker, type SchemaVerdict } from '../../plugins-sdk';

/**
 * JSON schemas of tool parameters and event payloads, checked with ajv 8 (JSON Schema 2020-12;
 * `createSchemaChecker` in the SDK). A schema ajv cannot compile (an unknown `$schema`, a `$ref` to
 * nothing, an invalid keyword value) is "unreadable": its topic or tool shows an unavailable marker
 * instead of a shape. Two plugins' schemas may share an `$id` without clashing.
 */
export type SchemaCheck = SchemaVerdict;

/** Tool parameters and event payloads (one instance for this purpose). */
const toolSchemas = createSchemaChecker();

/** Whether ajv can compile the schema. */
export function isReadableSchema(schema: Record<string, unknown>): boolean {
  return toolSchemas.problem(schema) === null;
}

/** Checks `value` against `schema`; an unreadable schema fails with the compile error. */
export function checkSchema(schema: Record<string, unknown>, value: unknown): SchemaCheck {
  return toolSchemas.check(schema, value);
}

/** Whether a schema uses references (`$ref`, `$defs`, `definitions`) anywhere. */
export function usesReferences(schema: unknown): boolean {
  if (Array.isArray(schema)) return schema.some(usesReferences);
  if (schema === null || typeof schema !== 'object') return false;
  return Object.entries(schema).some(([k, v]) => k === '$ref' || k === '$defs' || k === 'definitions' || usesReferences(v));
}
