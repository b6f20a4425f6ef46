/**
 * The plugin contract-test harness (`libs/plugin-testing`): a test-only library. It runs the real
 * engine, so it depends on both `libs/plugins-sdk` and `libs/engine` — which is why it is a library
 * of its own: the SDK, which plugin code imports, must not pull the engine in (the engine imports
 * the SDK). Import it from test files only.
 */
export { createPluginHarness } from './harness';
export type { PluginHarness, TurnOptions, HarnessAudit } from './harness';
export type { PluginHarnessOptions, ScriptedReply, InlineWorld } from './options';
export { HarnessTurn } from './turn';
export type { OutputView } from './turn';
export type { RequestView, SegmentView, MessageView } from './request-view';
export { toolNamesOf } from './request-view';
export { CACHEABLE_PREFIX_MIN, UUID_PATTERN, ISO_TIME_PATTERN, cachePromptText, sharedPrefixTokens, prefixReuse } from './prefix-cache';
export type { PrefixReuse } from './prefix-cache';
export { HarnessOptionsError, HarnessTurnFailedError, HarnessTurnTimeoutError, HarnessLookupError } from './errors';
export { BUILTIN_PLUGINS_DIR, INLINE_WORLD_ID } from './fixtures';
export { DEFAULT_REPLY_KEY } from './replies';
