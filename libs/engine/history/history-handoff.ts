import { BoundedMemo } from '../../memo';
import type { LoadedHistory } from './history-loader';

/**
 * The shared history view a compaction barrier read (or a turn step read with the journal, in the
 * same statement: `turnStepReading`), kept in its process for the barrier and the runtime jobs of
 * the same execution that start after it (each of them reads the same view otherwise).
 * Keyed by the session's stream version at which it was read: the views (turn_messages, summaries,
 * history_watermarks) are projections of the session's stream, applied with each append, so a
 * runtime job whose journal has that same version reads exactly these rows; any append in between
 * (a compaction, a recorded handler result, an input) changes the version and the job reads anew.
 * Only a process that ran the barrier (or that read) has an entry (another worker reads as before); bounded.
 */
const MAX_KEPT = 64;
const kept = new BoundedMemo<string, LoadedHistory>({ maxEntries: MAX_KEPT });

const key = (ref: HistoryHandoffKey) => `${ref.tenantId}/${ref.sessionId}/${ref.executionId}@${ref.streamVersion}`;

export interface HistoryHandoffKey {
  tenantId: string;
  sessionId: string;
  executionId: string;
  /** The session's stream version the history was read at (and the barrier's journal ended at). */
  streamVersion: number;
}

/** Keeps the history a barrier read at `streamVersion` (no coverage: what a runtime job reads). */
export function keepHistory(ref: HistoryHandoffKey, history: LoadedHistory): void {
  const session = `${ref.tenantId}/${ref.sessionId}/`;
  kept.deleteWhere((_, k) => k.startsWith(session)); // one per session: the latest
  kept.set(key(ref), history);
}

/** The history kept for this execution at exactly this stream version, if any (callers only read it). */
export function keptHistory(ref: HistoryHandoffKey): LoadedHistory | undefined {
  return kept.get(key(ref));
}

/**
 * The shared history view a turn step read with its journal, handed to the runtimes of the stage
 * it runs inline: valid for a runtime while the journal's `historyVersion` is still this one (the
 * views change only with the events that move it), however many appends its siblings made since.
 */
export interface StageHistory {
  history: LoadedHistory;
  historyVersion: number;
}
