/** What createEngine starts beside the turns: the offline provider emulator (the one door to libs/emulator) and the projectors. */
export { startOfflineEmulator, worldReplyRules } from './offline-emulator';
export { ASYNC_PROJECTIONS, createAsyncProjector, engineInlineProjections } from './projections';
