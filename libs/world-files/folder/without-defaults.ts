import { isDeepStrictEqual } from 'node:util';
import { z } from 'zod';

/**
 * `value` without the fields its schema would fill in with the same value (a lorebook entry's
 * `constant: false`, a character's `aliases: []`, …) and without `undefined` fields, through every
 * object, array and record the schema describes. Reading the result with `schema` gives back
 * `value`: a default is left out only when it parses to an equal value.
 */
export function withoutDefaults(schema: z.core.$ZodType, value: unknown): unknown {
  const inner = unwrap(schema);
  if (Array.isArray(value)) return inner instanceof z.ZodArray ? value.map((v) => withoutDefaults(inner.element, v)) : value;
  if (value === null || typeof value !== 'object') return value;
  if (inner instanceof z.ZodRecord) return mapValues(value, (v) => withoutDefaults(inner.valueType, v));
  if (!(inner instanceof z.ZodObject)) return value;
  const shape: Record<string, z.core.$ZodType> = inner.shape;
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) {
    if (v === undefined) continue;
    const field = Object.hasOwn(shape, key) ? shape[key] : undefined;
    if (field === undefined) setOwn(out, key, v);
    else if (!(field instanceof z.ZodDefault && isDeepStrictEqual(v, field.parse(undefined)))) setOwn(out, key, withoutDefaults(field, v));
  }
  return out;
}

function unwrap(schema: z.core.$ZodType): z.core.$ZodType {
  let s = schema;
  while (s instanceof z.ZodDefault || s instanceof z.ZodOptional) s = s.unwrap();
  return s;
}

function mapValues(value: object, f: (v: unknown) => unknown): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) if (v !== undefined) setOwn(out, key, f(v));
  return out;
}

/** `out[key] = value` as an own property, also for a key named `__proto__` (which an assignment would take as the prototype). */
function setOwn(out: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
}
