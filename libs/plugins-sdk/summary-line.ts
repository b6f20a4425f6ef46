import { cutText } from '../data-boundary';

/**
 * `text` on one line (each run of whitespace one space, trimmed), cut to at most `max` code points
 * with `…` when cut; the cut lands on a grapheme boundary (never inside a surrogate pair, an emoji
 * sequence or a letter and its marks). For the player-facing summaries of tool results.
 */
export function clipLine(text: string, max: number): string {
  return cutText(text.replace(/\s+/g, ' ').trim(), max);
}
