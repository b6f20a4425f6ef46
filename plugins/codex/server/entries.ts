/** A codex entry as stored (plugin data namespace `entries`, keyed by {@link entryKey}). */
export interface CodexEntry {
  term: string;
  category: string;
  summary: string;
  /** The turn number on which the story introduced it (a story field, not a timestamp). */
  discoveredOnTurn: number;
}

/** At most this many code points in a key. */
const KEY_CODE_POINTS = 64;

/**
 * A readable, stable key for a term: NFC, trimmed, lower-cased, runs of whitespace as one dash,
 * cut by code points (never inside a surrogate pair). "The Ash River" and "the  ash river" share one key.
 */
export function entryKey(term: string): string {
  const slug = term.normalize('NFC').trim().toLowerCase().replace(/\s+/gu, '-');
  return Array.from(slug).slice(0, KEY_CODE_POINTS).join('');
}

/** Compares by code units: the same order in every locale and process. */
export const byKey = (a: { key: string }, b: { key: string }): number => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);
