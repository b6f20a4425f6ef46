/**
 * How much of its history limit a session uses: the uncompacted messages every shared-history
 * runtime reads (spec §1 step 1), against the engine's bound. Past the bound, every turn of the
 * session fails (`HistoryTooLongError`: nothing is cut silently); before it, the session reports
 * a warning from {@link HISTORY_WARNING_SHARE} of it, naming the fix. Pure: no I/O.
 */

import { EngineError } from '../../errors';
import { DEFAULT_HISTORY_MESSAGE_LIMIT } from '../config';

export { DEFAULT_HISTORY_MESSAGE_LIMIT };

/** From this share of the limit on (80 %), a session's history is in `warning`. */
export const HISTORY_WARNING_SHARE = { numerator: 4, denominator: 5 } as const;

/** The first message count in `warning` for a limit: 80 % of it rounded up, in integers (no float rounding at the boundary). */
export function historyWarningFrom(limit: number): number {
  const { numerator, denominator } = HISTORY_WARNING_SHARE;
  return Math.floor((limit * numerator + denominator - 1) / denominator);
}

/** The built-in plugin that provides `history.compact@2`. */
export const COMPACTION_PLUGIN_ID = 'history-compaction';

/** `ok`; `warning`: at least 80 % of the limit; `full`: over the limit, every turn fails. */
export type HistoryState = 'ok' | 'warning' | 'full';

/**
 * The code a turn fails with past the limit: `HISTORY_NEEDS_COMPACTION` when the session runs no
 * `history.compact@2` provider (the fix: add `history-compaction` to its plugins),
 * `HISTORY_TOO_LONG` when it runs one that has not kept up.
 */
export type HistoryLimitCode = 'HISTORY_NEEDS_COMPACTION' | 'HISTORY_TOO_LONG';

export interface HistoryUse {
  /** Uncompacted messages: what each shared-history runtime of the next turn reads. */
  messages: number;
  /** The engine's bound; more uncompacted messages than this fail every turn. */
  limit: number;
  state: HistoryState;
  /** The session runs a `history.compact@2` provider. */
  compaction: boolean;
  /** In `warning` and `full`: the code its turns fail (or will fail) with past the limit. */
  code?: HistoryLimitCode;
  /** In `warning` and `full`: what to do about it. */
  fix?: string;
}

export function historyLimitCode(compaction: boolean): HistoryLimitCode {
  return compaction ? 'HISTORY_TOO_LONG' : 'HISTORY_NEEDS_COMPACTION';
}

/** What to do when a session's history nears or passes the limit. */
export function historyFix(compaction: boolean): string {
  return compaction
    ? "the session's history.compact@2 provider has not kept the history small: see why its compactions fail (compaction.barrier-passed@1 outcomes, the worker's log)"
    : `add \`${COMPACTION_PLUGIN_ID}\` to the session's plugins (\`plugins\` when creating the session, or the world's \`plugins\`): without a history.compact@2 provider no message is ever compacted`;
}

/** The state of a session's history for its uncompacted message count. */
export function historyUse(args: { messages: number; limit: number; compaction: boolean }): HistoryUse {
  const { messages, limit, compaction } = args;
  const state: HistoryState = messages > limit ? 'full' : messages >= historyWarningFrom(limit) ? 'warning' : 'ok';
  const use: HistoryUse = { messages, limit, state, compaction };
  return state === 'ok' ? use : { ...use, code: historyLimitCode(compaction), fix: historyFix(compaction) };
}

/**
 * The session has more uncompacted messages than the history read's safety bound (spec §1 step 1:
 * the shared history view is everything uncompacted, which compaction keeps small). Nothing is cut
 * silently: the turn fails with this error (permanent) until compaction catches up. Its code names
 * the cause: `HISTORY_NEEDS_COMPACTION` when the session runs no `history.compact@2` provider (the
 * message says to add `history-compaction` to its plugins), `HISTORY_TOO_LONG` when it runs one
 * that has not kept up, or when that is not known (a rebuild). The session's history use reports
 * the same state before it is reached (`GET /v1/sessions/:id`, libs/engine/history-use).
 */
export class HistoryTooLongError extends EngineError {
  readonly code: HistoryLimitCode;
  readonly category = 'invalid';
  readonly sessionId: string;
  readonly uncompacted: number;
  readonly bound: number;
  /** The session runs a `history.compact@2` provider; undefined: not known where it was thrown. */
  readonly compaction: boolean | undefined;
  constructor(details: { sessionId: string; uncompacted: number; bound: number; compaction?: boolean }) {
    const { sessionId, uncompacted, bound, compaction } = details;
    const fix = compaction === undefined ? `${historyFix(false)}; or, when it has one, ${historyFix(true)}` : historyFix(compaction);
    super(`session ${sessionId}: ${uncompacted} uncompacted messages exceed the history limit of ${bound} (COVEL_HISTORY_MESSAGE_LIMIT); ${fix}`);
    this.code = historyLimitCode(compaction ?? true);
    this.sessionId = sessionId;
    this.uncompacted = uncompacted;
    this.bound = bound;
    this.compaction = compaction;
  }
}
