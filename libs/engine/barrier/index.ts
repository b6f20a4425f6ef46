export { runCompactionBarrier, barrierRuntime, unwaitingRuntimes, CompactionFailedError, COMPACTION_TIMEOUT_MS } from './compaction-barrier';
export type { BarrierResult } from './compaction-barrier';
export { compactionWindows, estimateRequestTokens, inputWindow, COMPACTION_TRIGGER_SHARE, STORY_SLOT } from './trigger';
export type { CompactionWindows } from './trigger';
export { RecordedSummaryModel, summaryCall, summaryFinish, SUMMARY_SLOT } from './summary-model';
export type { SummaryModelRequest } from './summary-model';
