/**
 * The offline provider emulator: a loopback HTTP server that speaks the four wire formats, rejects
 * what the providers reject and simulates their prompt caches. A dev and test tool (the embedded
 * default and the tests use it), not a provider: `libs/providers` does not depend on it.
 */
export { ProviderEmulator } from './emulator-server';
export type { EmulatorOptions, EmulatorFault, RecordedRequest, EmulatorScript, ScriptedCall, StreamingFault } from './emulator-server';
export type { Reply, ReplyInput } from './reply';
export type { EmulatedCall } from './route';
export { anthropicBlocks } from './anthropic-route';
export { commonPrefixLength } from './prefix-cache';
export { ReplyBook, ReplyBookRule, replyBookScript } from './reply-book';
export { worldCreationReply } from './world-reply';
export { AutomaticPrefixCache, OPENAI_PREFIX_CACHE } from './prefix-cache';
export { automaticCacheText, type CacheText } from './cache-text';
