/** The story history a runtime reads: loaded from the read models or folded from the log, handed over by a barrier, with its recent pictures. */
export { HistoryFold } from './history-fold';
export { StoryFolds } from './story-folds';
export { keepHistory, keptHistory } from './history-handoff';
export { LORE_SCAN_LIMIT, historyUnchanged, loadRuntimeHistory, previousTurnScope, retryRead, retryScope } from './history-loader';
export type { LoadedHistory } from './history-loader';
export { IMAGE_LIMITS, attachImages, readRecentImages, recentImageReferences } from './picture-attachments';
export type { ImageReference, ReadImages } from './picture-attachments';
export {
  DEFAULT_HISTORY_MESSAGE_LIMIT,
  HISTORY_WARNING_SHARE,
  COMPACTION_PLUGIN_ID,
  HistoryTooLongError,
  historyWarningFrom,
  historyLimitCode,
  historyFix,
  historyUse,
} from './history-limit';
export type { HistoryUse, HistoryState, HistoryLimitCode } from './history-limit';
