/** A session's use of its history limit, read for the API and the inspector (the pure state: history/history-limit.ts). */
export { SessionHistoryUse, hasCompactionProvider } from './session-history';
export type { SessionPluginList } from './session-history';
