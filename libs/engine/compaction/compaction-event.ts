import type { CompactionPlan } from '../../context';
import type { NewEvent } from '../../events';

/**
 * The one event that saves an accepted compaction (spec §1 "History compaction": summaries and
 * message markers together, one event applied in one transaction). A merge carries the id of the
 * oldest segment it replaces. Appending it re-checks, in the append's transaction, that its new
 * messages are still the stored uncompacted prefix (`CompactionPrefixMismatchError` otherwise:
 * nothing changes, the caller skips this compaction).
 */
export function compactionEvent(plan: CompactionPlan, compactionId: string): NewEvent {
  return {
    type: 'history.compacted@1',
    data: {
      compactionId,
      summaries: plan.segments.map((s) => ({
        summaryId: s.summaryId,
        messageIds: [...s.messageIds],
        replacesSummaryIds: [...s.replacesSummaryIds],
        content: s.content,
        truncated: s.truncated,
        focusSections: [...s.focusSections],
      })),
    },
  };
}
