import Ajv from 'ajv';
import type { WorldView } from '../../../libs/plugins-sdk';

/** A dimension as the world file declares it (`worlds/<id>/WORLD.md` `dimensions.<id>`). */
export type DeclaredDimension = WorldView['dimensions'][string];

/** A JSON value check compiled from a dimension's schema: the error text, or null when the value fits. */
export type ValueCheck = (value: unknown) => string | null;

const ajv = new Ajv({ allErrors: true });
const compiled = new WeakMap<object, ValueCheck | null>();

/** The schema's check, or null when the schema cannot be compiled (such a dimension has no valid rule). */
export function valueCheck(schema: Readonly<Record<string, unknown>>): ValueCheck | null {
  if (compiled.has(schema)) return compiled.get(schema) ?? null;
  let check: ValueCheck | null;
  try {
    const validate = ajv.compile(structuredClone(schema) as object);
    check = (value) => (validate(value) ? null : ajv.errorsText(validate.errors, { dataVar: 'value' }));
  } catch {
    check = null;
  }
  compiled.set(schema, check);
  return check;
}

/** The world's dimensions, sorted by id. */
export function declaredDimensions(world: WorldView | null): [string, DeclaredDimension][] {
  if (!world) return [];
  return Object.entries(world.dimensions).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

/**
 * A dimension the tracker maintains: its `updateRule` has text and its schema compiles. Every
 * other dimension is constant within the session.
 */
export function hasValidRule(d: DeclaredDimension): boolean {
  return typeof d.updateRule === 'string' && d.updateRule.trim().length > 0 && valueCheck(d.schema) !== null;
}

export const trackedDimensions = (world: WorldView | null) => declaredDimensions(world).filter(([, d]) => hasValidRule(d));
export const constantDimensions = (world: WorldView | null) => declaredDimensions(world).filter(([, d]) => !hasValidRule(d));
