export { buildContext } from './build-context';
export { historyWindow } from './history-window';
export type { AssembledContext, BuildContextParams, ContextMessage, HistoryMessage, RuntimeView } from './types';
