export * from './manifest';
export { loadPlugin, loadPlugins, parsePluginFile, splitFrontMatter, manifestIssues, PluginManifestError } from './load-plugin';
export { parseRuntimeFile, DEFAULT_ENTRIES } from './load-plugin';
export type { ManifestIssue } from './load-plugin';
export { loadWorld, LoreEntry, LoreEntryExtra, WorldManifest, WorldCharacter } from './world';
export type { LoadedWorld } from './world';
export { canonicalLocaleTag, promptLocaleOf, MAX_LOCALE_TAG_LENGTH } from './locale';
