import type { HistoryMessage, HistorySummary } from '../context';
import type { ReadModels } from '../events';
import { type ImageReference, recentImageReferences } from './picture-attachments';

export interface LoadedHistory {
  messages: HistoryMessage[];
  summaries: HistorySummary[];
  /** Lorebook scan range: the last committed messages, compacted ones included. */
  scanTail: { text: string }[];
  /** The most recent images of the uncompacted history, oldest first (the recent-images message). */
  images: ImageReference[];
}

/** Spec §4: a lorebook entry scans at most 20 committed messages. */
export const LORE_SCAN_LIMIT = 20;

/** Bounded reads before assembly: the uncompacted tail of turn_messages and the saved summaries. */
export async function loadRuntimeHistory(readModels: ReadModels, tenantId: string, sessionId: string, limit: number): Promise<LoadedHistory> {
  const [tails, summaries] = await Promise.all([
    readModels.historyTails(tenantId, sessionId, { window: limit, scan: LORE_SCAN_LIMIT }),
    readModels.summaries(tenantId, sessionId),
  ]);
  const messages = tails.uncompacted.map((r): HistoryMessage => ({
    messageId: r.messageId,
    turnId: r.turnId,
    role: r.role as HistoryMessage['role'],
    sourceType: r.sourceType as HistoryMessage['sourceType'],
    pluginId: r.pluginId,
    runtimeId: r.runtimeId,
    outputKind: r.outputKind as HistoryMessage['outputKind'],
    text: r.text,
  }));
  return { messages, summaries, scanTail: tails.scanTail.map((m) => ({ text: m.text })), images: recentImageReferences(tails.uncompacted) };
}
