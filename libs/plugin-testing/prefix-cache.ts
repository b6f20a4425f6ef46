import { commonPrefixLength } from '../emulator';
import { estimateTokens } from '../text';
import type { RequestView } from './request-view';
import type { HarnessTurn } from './turn';

/**
 * The emulator's automatic prefix cache counts nothing below a shared prefix of 1,024 emulator
 * tokens; a plugin's stable part (tool definitions + system prompt) keeps two 128-token steps of
 * margin above it, so a world with a smaller roster (or fewer blocks) still reads it from cache.
 * Contract suites assert `sharedPrefixTokens(...)` and `HarnessTurn.cachedTokens(...)` against it.
 */
export const CACHEABLE_PREFIX_MIN = 1024 + 2 * 128;

/** A UUID anywhere in a text (a prompt must not carry ids that change between sessions). */
export const UUID_PATTERN = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i;
/** An ISO-8601 date-time (to the minute) anywhere in a text (a prompt must not carry timestamps). */
export const ISO_TIME_PATTERN = /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/;

/**
 * The prompt text the emulator's automatic prefix cache compares for an OpenAI chat request: the
 * tool definitions as JSON, then each message as JSON, in order.
 */
export function cachePromptText(request: RequestView): string {
  const messages = (request.body.messages ?? []) as unknown[];
  return JSON.stringify(request.body.tools ?? []) + messages.map((m) => JSON.stringify(m)).join('');
}

/**
 * Emulator tokens of the prompt prefix `after` shares with `before` (typically the same runtime's
 * request of the turn before): what the emulator's automatic prefix cache could read.
 */
export function sharedPrefixTokens(before: RequestView, after: RequestView): number {
  const [a, b] = [cachePromptText(before), cachePromptText(after)];
  return estimateTokens(b.slice(0, commonPrefixLength(a, b)));
}

/** How much of one turn's request prompt the turn before's left reusable, and what the emulator read from cache. */
export interface PrefixReuse {
  /** Emulator tokens of the prefix shared with the previous turn's request (`sharedPrefixTokens`). */
  sharedTokens: number;
  /** The cached input tokens the emulator reported for the request (`HarnessTurn.cachedTokens`). */
  cachedTokens: number | undefined;
}

/**
 * For each turn after the first, how the request `pick` chooses (e.g. `(t) => t.request('codex')`)
 * reused the previous turn's one: the "stable prefix is read from cache" check of a contract suite
 * asserts both numbers against `CACHEABLE_PREFIX_MIN`.
 */
export function prefixReuse(turns: readonly HarnessTurn[], pick: (turn: HarnessTurn) => RequestView): PrefixReuse[] {
  return turns.slice(1).map((turn, i) => {
    const [before, after] = [pick(turns[i]), pick(turn)];
    return { sharedTokens: sharedPrefixTokens(before, after), cachedTokens: turn.cachedTokens(after) };
  });
}
