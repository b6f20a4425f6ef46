import type { SessionPreferences, SlotPreference } from '../../events';
import type { ErrorIssue } from '../../errors';
import type { RequestOverrides } from '../../providers';

export type { SessionPreferences, SlotPreference };

/** A session whose player set nothing. */
export const NO_PREFERENCES: SessionPreferences = Object.freeze({ slots: Object.freeze({}) });

/** A field of a slot's preferences in a change: a value sets it, `null` clears it, absent keeps it. */
export type SlotPreferencePatch = { [K in keyof SlotPreference]?: SlotPreference[K] | null };

/** A change of the player's preferences: per slot, what changes (`null`: clear all the player set on it). */
export interface PreferencesPatch {
  slots: Readonly<Record<string, SlotPreferencePatch | null>>;
}

const FIELDS = ['reasoning', 'toolChoice'] as const satisfies readonly (keyof SlotPreference)[];

/** A slot's preferences in one form (fields in one order, absent ones left out); null when nothing is set. */
function slotEntry(fields: SlotPreference): SlotPreference | null {
  const kept: SlotPreference = {};
  if (fields.reasoning !== undefined) {
    const { enabled, effort } = fields.reasoning;
    kept.reasoning = { enabled, ...(effort !== undefined ? { effort } : {}) };
  }
  if (fields.toolChoice !== undefined) kept.toolChoice = fields.toolChoice;
  return Object.keys(kept).length > 0 ? kept : null;
}

/** The preferences in one form: slots in name order, no empty slot (equal preferences, equal JSON). */
export function normalizePreferences(preferences: SessionPreferences): SessionPreferences {
  return { slots: slotsObject(new Map(Object.entries(preferences.slots))) };
}

/** Own properties only (`Object.fromEntries`): a slot named like an Object.prototype member stays a plain key. */
function slotsObject(slots: ReadonlyMap<string, SlotPreference>): Record<string, SlotPreference> {
  const kept = [...slots].flatMap(([name, fields]) => {
    const entry = slotEntry(fields);
    return entry ? [[name, entry] as const] : [];
  });
  return Object.fromEntries(kept.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/** The preferences after a change (normalized). */
export function applyPreferencesPatch(current: SessionPreferences, patch: PreferencesPatch): SessionPreferences {
  const slots = new Map(Object.entries(current.slots));
  for (const [name, change] of Object.entries(patch.slots)) {
    if (change === null) {
      slots.delete(name);
      continue;
    }
    const next: SlotPreference = { ...slots.get(name) };
    for (const field of FIELDS) {
      const value = change[field];
      if (value === null) delete next[field];
      else if (value !== undefined) Object.assign(next, { [field]: value });
    }
    slots.set(name, next);
  }
  return { slots: slotsObject(slots) };
}

export const samePreferences = (a: SessionPreferences, b: SessionPreferences): boolean =>
  JSON.stringify(normalizePreferences(a)) === JSON.stringify(normalizePreferences(b));

/** What the player set on a slot's requests, as the adapters take it (`ModelCall.overrides`); none: undefined. */
export function playerOverrides(preferences: SessionPreferences, slot: string): RequestOverrides | undefined {
  return Object.hasOwn(preferences.slots, slot) ? preferences.slots[slot] : undefined;
}

/** A 400's issues for slots the engine does not have (`<path>.<name>`): the player sets preferences on `llm.toml`'s slots only. */
export function unknownSlotIssues(known: readonly string[], slots: Readonly<Record<string, unknown>>, path: string): ErrorIssue[] {
  return Object.keys(slots)
    .filter((name) => !known.includes(name))
    .map((name) => ({ path: `${path}.${name}`, message: `unknown model slot; the slots are ${known.map((k) => JSON.stringify(k)).join(', ')}` }));
}
