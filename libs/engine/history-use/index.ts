export {
  DEFAULT_HISTORY_MESSAGE_LIMIT,
  HISTORY_WARNING_SHARE,
  COMPACTION_PLUGIN_ID,
  historyWarningFrom,
  historyLimitCode,
  historyFix,
  historyUse,
} from './history-use';
export type { HistoryUse, HistoryState, HistoryLimitCode } from './history-use';
export { SessionHistoryUse, hasCompactionProvider } from './session-history';
export type { SessionPluginList } from './session-history';
