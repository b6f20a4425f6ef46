import type { PluginDataReader, WorldView } from '../../../libs/plugins-sdk';
import { declaredDimensions } from './dimensions';

/** One dimension's state: its value and version (the version goes up by one each time the value changes). */
export interface DimensionState {
  value: unknown;
  version: number;
}

/** Sₙ: the dimensions a turn reads, frozen for the whole turn. */
export interface Snapshot {
  dimensions: Record<string, DimensionState>;
}

/** What a turn's tracker wrote for the next turn (kept under that turn's id). */
export interface Staged extends Snapshot {
  turnNumber: number;
}

/** Namespaces of the plugin's data. */
export const PUBLISHED = 'published';
export const STAGED = 'staged';

/** A turn number as a key that sorts as it counts. */
export const turnKey = (turnNumber: number) => `turn-${String(turnNumber).padStart(6, '0')}`;

/** The world's declared values and versions: the session's state before its first turn. */
export function initialSnapshot(world: WorldView | null): Snapshot {
  return { dimensions: Object.fromEntries(declaredDimensions(world).map(([id, d]) => [id, { value: d.value, version: d.version }])) };
}

/** The state `from` has for each dimension the world declares now (a dimension it lacks: the declared one). */
function overWorld(world: WorldView | null, from: Snapshot): Snapshot {
  const initial = initialSnapshot(world).dimensions;
  return {
    dimensions: Object.fromEntries(Object.entries(initial).map(([id, d]) => [id, Object.hasOwn(from.dimensions, id) ? from.dimensions[id] : d])),
  };
}

function isSnapshot(value: unknown): value is Snapshot {
  return value !== null && typeof value === 'object' && 'dimensions' in value && typeof (value as Snapshot).dimensions === 'object';
}

/** How many earlier turn numbers `currentSnapshot` looks back through (activations count as turns without a publication). */
export const LOOKBACK_TURNS = 64;

/** Where Sₙ is read from: the turn's number and the previous turn as the history has it. */
export interface TurnRef {
  turnNumber: number;
  /** `ctx.session.previousTurnId`: the committed previous turn (after a select, the chosen alternative). */
  previousTurnId?: string;
}

/**
 * Sₙ of a turn: what its pre-turn stage published (a regenerated turn reads the artifact its source
 * turn published, which has the same number); else what it will publish: the state the previous
 * turn's tracker staged (`staged/<previousTurnId>`: the alternative the history holds, never a
 * replaced or failed one); else, going back from the previous turn number, the first published
 * state (the tracker did not run; a number without one is an execution this plugin did not run in,
 * such as an activation); else — the session's first turn with this plugin — the world's declared
 * values. A pure function of the plugin's data, so the pre-turn publication, the story's segment
 * and the world context agree even when one is asked first.
 */
export async function currentSnapshot(data: PluginDataReader, world: WorldView | null, turn: TurnRef): Promise<Snapshot> {
  const published = await data.get(PUBLISHED, turnKey(turn.turnNumber));
  if (isSnapshot(published)) return overWorld(world, published);
  if (turn.previousTurnId !== undefined) {
    const staged = await data.get(STAGED, turn.previousTurnId);
    if (isSnapshot(staged)) return overWorld(world, { dimensions: staged.dimensions });
  }
  for (let k = turn.turnNumber - 1; k >= 1 && k >= turn.turnNumber - LOOKBACK_TURNS; k--) {
    const previous = await data.get(PUBLISHED, turnKey(k));
    if (isSnapshot(previous)) return overWorld(world, previous);
  }
  return initialSnapshot(world);
}
