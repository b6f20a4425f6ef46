import { type CharacterLike, escapeXml, isPlayerControlled, type SeatLike } from '../data-boundary';

/** Compares by UTF-16 code units: the same order in every locale and process (segments stay deterministic). */
export function byCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

export interface RosterLineOptions {
  /** The seats: a seated character is player-controlled (as is one of type `player`). */
  readonly seats?: readonly SeatLike[];
  /** `mark` (default): player-controlled characters end with ` [player]`; `omit`: they are left out. */
  readonly players?: 'mark' | 'omit';
}

/**
 * A bookkeeper's roster (spec §2 "Layout for bookkeeping runtimes": the part that rarely changes,
 * for a session segment): one line per character, `- <id> | <name> (aka <alias>, …) [player]`,
 * sorted by id (code units), ids, names and aliases XML-escaped. No description or fields: those
 * change, and belong in the turn context.
 */
export function rosterLines(characters: readonly CharacterLike[], options: RosterLineOptions = {}): string[] {
  const players = options.players ?? 'mark';
  return [...characters]
    .filter((c) => players === 'mark' || !isPlayerControlled(c, options.seats))
    .sort((a, b) => byCodeUnits(a.id, b.id))
    .map((c) => {
      const aliases = c.aliases?.length ? ` (aka ${c.aliases.map(escapeXml).join(', ')})` : '';
      const player = players === 'mark' && isPlayerControlled(c, options.seats) ? ' [player]' : '';
      return `- ${escapeXml(c.id)} | ${escapeXml(c.name)}${aliases}${player}`;
    });
}

/** Default length of a folded key, in code points. */
export const FOLDED_KEY_CODE_POINTS = 64;

/**
 * A readable, stable plugin-data key for a term the model names: NFC, trimmed, lower-cased, each
 * run of whitespace one `-`, cut to `maxCodePoints` code points (never inside a surrogate pair).
 * "The Ash River" and "the  ash river" give `the-ash-river`; "灰烬河" stays "灰烬河".
 */
export function foldKey(text: string, maxCodePoints: number = FOLDED_KEY_CODE_POINTS): string {
  const folded = text.normalize('NFC').trim().toLowerCase().replace(/\s+/gu, '-');
  return Array.from(folded).slice(0, maxCodePoints).join('');
}
