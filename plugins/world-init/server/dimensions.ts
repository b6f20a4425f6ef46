import { createSchemaChecker, type WorldView } from '../../../libs/plugins-sdk';

/** A dimension as the world file declares it (`worlds/<id>/WORLD.md` `dimensions.<id>`). */
export type DeclaredDimension = WorldView['dimensions'][string];

/** A JSON value check compiled from a dimension's schema: the error text, or null when the value fits. */
export type ValueCheck = (value: unknown) => string | null;

/** Dimension schemas only: a world's schemas never meet a plugin's, and two sharing an `$id` do not clash. */
const dimensionSchemas = createSchemaChecker();
const compiled = new WeakMap<object, ValueCheck | null>();

/** The schema's check (its messages name where: `/guilds/1: must be string`), or null when the schema cannot be compiled (such a dimension has no valid rule). */
export function valueCheck(schema: Readonly<Record<string, unknown>>): ValueCheck | null {
  if (compiled.has(schema)) return compiled.get(schema) ?? null;
  const check: ValueCheck | null =
    dimensionSchemas.problem(schema) !== null
      ? null
      : (value) => {
          const verdict = dimensionSchemas.check(schema, value);
          return verdict.ok ? null : verdict.messages.join('; ');
        };
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
