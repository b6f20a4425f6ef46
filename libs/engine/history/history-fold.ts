import type { HistoryMessage, HistorySummary } from '../../context';
import { type MediaReference, openingMessage, type StoredEvent } from '../../events';
import { HistoryTooLongError } from './history-limit';
import { type ImageReference, recentImageReferences } from './picture-attachments';

/**
 * The committed history of a session folded from its events in memory: what the turn_messages
 * (uncompacted rows) and summaries projections hold, for rebuilding a request from the log alone.
 */
export class HistoryFold {
  private messages: (HistoryMessage & { compacted: boolean; media?: MediaReference })[] = [];
  /** The session's opening turn (turn 0, `session.opened@1`): in the history, not among the committed turns. */
  private openingTurnId: string | null = null;
  private summaries: HistorySummary[] = [];

  apply(event: StoredEvent): void {
    if (event.type === 'session.opened@1') {
      this.openingTurnId = event.data.turnId;
      this.messages.push({ ...openingMessage(event.data), turnId: event.data.turnId, compacted: false });
    }
    if (event.type === 'turn.committed@1') {
      for (const m of event.data.messages) this.messages.push({ ...m, turnId: event.data.turnId, compacted: false });
    }
    if (event.type === 'execution.cancelled@1') {
      // a stop that kept the partly streamed story text: committed as a turn is
      for (const m of event.data.messages ?? []) this.messages.push({ ...m, turnId: event.data.turnId, compacted: false });
    }
    if (event.type === 'turn.superseded@1') {
      // the latest turn leaves; a selected alternative's messages take its place
      const { turnId, byTurnId, messages } = event.data;
      this.messages = this.messages.filter((m) => m.turnId !== turnId);
      for (const m of messages ?? []) this.messages.push({ ...m, turnId: byTurnId, compacted: false });
    }
    if (event.type === 'history.compacted@1') {
      for (const s of event.data.summaries) {
        const ids = new Set(s.messageIds);
        for (const m of this.messages) if (ids.has(m.messageId)) m.compacted = true;
        if (s.replacesSummaryIds.length === 0) {
          this.summaries.push({ id: s.summaryId, content: s.content, messageIds: s.messageIds });
          continue;
        }
        const replaced = new Set(s.replacesSummaryIds);
        const at = this.summaries.findIndex((x) => replaced.has(x.id));
        const oldest = this.summaries[at];
        const covered = this.summaries.filter((x) => replaced.has(x.id)).flatMap((x) => x.messageIds ?? []);
        const merged = { id: oldest.id, content: s.content, messageIds: [...covered.filter((m) => !ids.has(m)), ...s.messageIds] };
        this.summaries = this.summaries.filter((x) => !replaced.has(x.id));
        this.summaries.splice(at, 0, merged);
      }
    }
  }

  /**
   * The shared history view as the worker reads it (`loadRuntimeHistory`): every uncompacted
   * message, failing like it beyond the safety bound.
   */
  uncompacted(sessionId: string, bound: number, without?: string): HistoryMessage[] {
    const all = this.uncompactedTail(Number.MAX_SAFE_INTEGER, without);
    if (all.length > bound) throw new HistoryTooLongError({ sessionId, uncompacted: all.length, bound });
    return all;
  }

  /** Committed turns with at least one message, compacted ones included (the history statistics); the opening (turn 0) is not one. */
  turnCount(without?: string): number {
    return new Set(this.kept(without).flatMap((m) => (m.turnId === this.openingTurnId ? [] : [m.turnId]))).size;
  }

  /** The last `limit` uncompacted messages. */
  uncompactedTail(limit: number, without?: string): HistoryMessage[] {
    return this.kept(without)
      .filter((m) => !m.compacted)
      .slice(-limit)
      .map(({ compacted: _c, media: _m, ...m }) => m);
  }

  /** The most recent images of the same bounded uncompacted read, as the worker's history read finds them. */
  recentImages(limit: number, without?: string): ImageReference[] {
    return recentImageReferences(
      this.kept(without)
        .filter((m) => !m.compacted)
        .slice(-limit),
    );
  }

  /** The last `limit` committed messages, compacted or not. */
  committedTail(limit: number, without?: string): { text: string }[] {
    return this.kept(without)
      .slice(-limit)
      .map((m) => ({ text: m.text }));
  }

  /** The messages as a regenerated turn reads them (`without`: the turn it re-runs, left out), else all. */
  private kept(without: string | undefined) {
    return without === undefined ? this.messages : this.messages.filter((m) => m.turnId !== without);
  }

  /** Summaries with the messages each covers (for audit). */
  summariesWithCoverage(): { id: string; messageIds: readonly string[] }[] {
    return this.summaries.map((s) => ({ id: s.id, messageIds: s.messageIds ?? [] }));
  }

  /** As the bounded summaries read returns them (content only). */
  savedSummaries(): HistorySummary[] {
    return this.summaries.map((s) => ({ id: s.id, content: s.content }));
  }
}
