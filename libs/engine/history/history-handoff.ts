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
const kept = new Map<string, LoadedHistory>();
const MAX_KEPT = 64;

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
  for (const k of kept.keys()) if (k.startsWith(`${ref.tenantId}/${ref.sessionId}/`)) kept.delete(k); // one per session: the latest
  if (kept.size >= MAX_KEPT) kept.delete(kept.keys().next().value!);
  kept.set(key(ref), history);
}

/** The history kept for this execution at exactly this stream version, if any (callers only read it). */
export function keptHistory(ref: HistoryHandoffKey): LoadedHistory | undefined {
  return kept.get(key(ref));
}
