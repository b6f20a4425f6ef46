import type { HistoryMessage, HistorySummary } from '../../context';
import type { HistoryStats, HistoryView, ReadModels } from '../../events';
import { HistoryRaceError } from '../errors';
import { HistoryTooLongError } from './history-limit';
import { type ImageReference, recentImageReferences } from './picture-attachments';

export interface LoadedHistory {
  /** The shared history view: every uncompacted message, oldest first. */
  messages: HistoryMessage[];
  /** Saved summaries, oldest first (`truncated` and the covered messages when read with coverage). */
  summaries: (HistorySummary & { truncated?: boolean })[];
  /** Lorebook scan range: the last committed messages, compacted ones included. */
  scanTail: { text: string }[];
  /** Statistics for all of the session's messages. */
  stats: HistoryStats;
  /** The most recent images of the uncompacted history, oldest first (the recent-images message). */
  images: ImageReference[];
}

/** Spec §4: a lorebook entry scans at most 20 committed messages. */
export const LORE_SCAN_LIMIT = 20;

/**
 * Spec §1 step 1, bounded reads before assembly: every uncompacted message of turn_messages (the
 * shared history view; compaction keeps it small), the statistics for all messages and the saved
 * summaries (`withCoverage`: with the messages each covers, as the compaction provider gets them).
 * `without`: a regenerated turn's read, the turn it re-runs (the session's last rows) left out.
 * More uncompacted messages than `bound`: `HistoryTooLongError` (nothing is cut silently), its code
 * naming the fix by `compaction` (whether the session runs a `history.compact@2` provider).
 */
export async function loadRuntimeHistory(
  readModels: ReadModels,
  tenantId: string,
  sessionId: string,
  bound: number,
  options: { withCoverage?: boolean; without?: string; compaction?: boolean } = {},
): Promise<LoadedHistory> {
  // the summaries come with the view (one statement, in its snapshot, unless it is a regenerated turn's)
  const view = await readModels.historyView(tenantId, sessionId, {
    bound,
    scan: LORE_SCAN_LIMIT,
    ...(options.without !== undefined ? { without: options.without } : {}),
    summaries: { withMessageIds: options.withCoverage === true },
  });
  if (view.overBound) {
    throw new HistoryTooLongError({
      sessionId,
      uncompacted: view.stats.uncompacted,
      bound,
      ...(options.compaction === undefined ? {} : { compaction: options.compaction }),
    });
  }
  return loadedHistory(view);
}

/** The shared history view and summaries as a runtime reads them (`loadRuntimeHistory`), from a view read within its bound. */
export function loadedHistory(view: HistoryView): LoadedHistory {
  const messages = view.uncompacted.map((r): HistoryMessage => ({
    messageId: r.messageId,
    turnId: r.turnId,
    role: r.role as HistoryMessage['role'],
    sourceType: r.sourceType as HistoryMessage['sourceType'],
    pluginId: r.pluginId,
    runtimeId: r.runtimeId,
    outputKind: r.outputKind as HistoryMessage['outputKind'],
    text: r.text,
  }));
  return {
    messages,
    summaries: view.summaries ?? [],
    scanTail: view.scanTail.map((m) => ({ text: m.text })),
    stats: view.stats,
    images: recentImageReferences(view.uncompacted),
  };
}

/**
 * The limits of a runtime's read (`loadRuntimeHistory` without coverage or a left-out turn), for a
 * read of the view made beside another (`historyViewJson`).
 */
export function runtimeHistoryLimits(bound: number): { bound: number; scan: number; summaries: { withMessageIds: false } } {
  return { bound, scan: LORE_SCAN_LIMIT, summaries: { withMessageIds: false } };
}

/**
 * `ctx.session.previousTurnId`: the turn of the last player input in the history this execution
 * reads — the previous turn as committed (after a `select`, the chosen alternative's turn; for a
 * regeneration, the turn before the one it re-runs). None on the first turn, or when that input is
 * compacted already (compaction protects the last two player turns).
 */
export function previousTurnScope(history: { messages: readonly { sourceType: string; turnId: string }[] }): { previousTurnId?: string } {
  for (let i = history.messages.length - 1; i >= 0; i--) {
    if (history.messages[i].sourceType === 'player') return { previousTurnId: history.messages[i].turnId };
  }
  return {};
}

/** A regenerated turn's history read: without the turn it re-runs (none for any other execution). */
export function retryRead(execution: { retryFromTurnId?: string }): { without?: string } {
  return execution.retryFromTurnId === undefined ? {} : { without: execution.retryFromTurnId };
}

/**
 * What an execution's handlers, tools and functions see of its turn: its own `turnId`
 * (`ctx.session.turnId`) and, for a regenerated turn, the turn it re-runs (`ctx.session.retryFromTurnId`).
 */
export function retryScope(execution: { turnId: string; retryFromTurnId?: string }): { turnId: string; retryFromTurnId?: string } {
  return execution.retryFromTurnId === undefined ? { turnId: execution.turnId } : { turnId: execution.turnId, retryFromTurnId: execution.retryFromTurnId };
}

/**
 * Guards the race between a runtime job's history read and its `llm.calling` append (spec §1 step 5:
 * a windowed agent does not wait for the compaction barrier, which may end while it runs): called in
 * the append (after every catch-up), it throws `HistoryRaceError` when an event that changes the
 * history views landed after the journal version the read started from (the job is tried again and
 * reads anew: its recorded steps are kept); else no events.
 */
export function historyUnchanged(
  journal: { historyVersion: number },
  check: { job: { executionId: string; pluginId: string; runtimeId: string }; historyVersion: number },
): never[] {
  if (journal.historyVersion !== check.historyVersion) throw new HistoryRaceError(check.job.executionId, check.job.pluginId, check.job.runtimeId);
  return [];
}
