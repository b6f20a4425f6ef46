import type Ajv2020 from 'ajv/dist/2020';
import type { ErrorObject, Options, ValidateFunction } from 'ajv/dist/2020';
import type AjvDraft07 from 'ajv';

/**
 * JSON Schema checks as the engine makes them (ajv 8): a tool's parameters, an event's payload, a
 * runtime's output schema, a world dimension's value. A schema is read as JSON Schema 2020-12, the
 * dialect the providers take for tools and structured output; one that declares draft-07 in
 * `$schema` is read as draft-07.
 *
 * - Each checker has its own ajv instances, and a schema is registered under its `$id` only while it
 *   compiles (it may refer to itself by that `$id`), then removed: two plugins (or worlds) whose
 *   schemas share an `$id` never clash, and each value is checked against its own schema. A schema
 *   refers only to itself (`#/$defs/…`, its own `$id`), never to another plugin's.
 * - Not strict: a key that is no keyword (`x-…`) is ignored, as the providers ignore it.
 * - `format` is an annotation, not checked (2020-12's default format-annotation vocabulary): no
 *   format library is loaded.
 * - Compiled once per schema object (a WeakMap: a schema nobody holds is forgotten, and ajv keeps
 *   none of them).
 * - ajv is required when a checker first compiles a schema, not at the top: an engine starts with
 *   no schema to check, and every process and test file that loads the engine would evaluate it.
 */
export type SchemaVerdict = { ok: true } | { ok: false; messages: string[] };

export interface SchemaChecker {
  /** Why ajv cannot compile the schema (an unknown `$schema`, a `$ref` to nothing, an invalid keyword value), or null. */
  problem(schema: object): string | null;
  /** `value` checked against `schema`: ajv's messages, each naming where (`/a/0`, `(root)`); an unreadable schema fails with its compile error. */
  check(schema: object, value: unknown): SchemaVerdict;
}

const OPTIONS: Options = { allErrors: true, strict: false, validateFormats: false, logger: false };
const DRAFT_07 = /^https?:\/\/json-schema\.org\/draft-07\/schema#?$/;

type Compiled = { validate: ValidateFunction } | { error: string };

function newAjv(dialect: 'draft-07'): AjvDraft07;
function newAjv(dialect: '2020-12'): Ajv2020;
function newAjv(dialect: 'draft-07' | '2020-12'): AjvDraft07 | Ajv2020 {
  /* eslint-disable @typescript-eslint/no-require-imports */
  if (dialect === 'draft-07') return new (require('ajv') as typeof import('ajv')).default(OPTIONS);
  return new (require('ajv/dist/2020') as typeof import('ajv/dist/2020')).default(OPTIONS);
  /* eslint-enable @typescript-eslint/no-require-imports */
}

/** A checker with ajv instances of its own (one per purpose: tools and events, output schemas, dimensions). */
export function createSchemaChecker(): SchemaChecker {
  let ajv2020: Ajv2020 | undefined;
  let ajv07: AjvDraft07 | undefined;
  const compiled = new WeakMap<object, Compiled>();

  function compile(schema: object): Compiled {
    let entry = compiled.get(schema);
    if (entry) return entry;
    const declared = (schema as { $schema?: unknown }).$schema;
    const ajv = typeof declared === 'string' && DRAFT_07.test(declared) ? (ajv07 ??= newAjv('draft-07')) : (ajv2020 ??= newAjv('2020-12'));
    try {
      entry = { validate: ajv.compile(schema) };
    } catch (error) {
      entry = { error: error instanceof Error ? error.message : String(error) };
    } finally {
      ajv.removeSchema(schema); // its `$id` free for the next schema; ajv's cache holds no schema (ours is weak)
    }
    compiled.set(schema, entry);
    return entry;
  }

  return {
    problem: (schema) => {
      const entry = compile(schema);
      return 'error' in entry ? entry.error : null;
    },
    check: (schema, value) => {
      const entry = compile(schema);
      if ('error' in entry) return { ok: false, messages: [`the schema cannot be read: ${entry.error}`] };
      if (entry.validate(value)) return { ok: true };
      return { ok: false, messages: (entry.validate.errors ?? []).map(describeSchemaError) };
    },
  };
}

/** ajv's English message for one error, with where it is (`/a/0`, `(root)`) and the offending name or the allowed values. */
export function describeSchemaError(error: ErrorObject): string {
  const where = error.instancePath || '(root)';
  const params = error.params as Record<string, unknown>;
  const extra =
    error.keyword === 'additionalProperties'
      ? ` (${String(params.additionalProperty)})`
      : error.keyword === 'unevaluatedProperties'
        ? ` (${String(params.unevaluatedProperty)})`
        : error.keyword === 'enum' && Array.isArray(params.allowedValues)
          ? `: ${params.allowedValues.map((v) => JSON.stringify(v)).join(', ')}`
          : '';
  return `${where}: ${error.message ?? error.keyword}${extra}`;
}
