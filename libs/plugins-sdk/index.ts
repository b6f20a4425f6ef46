export * from './manifest';
export { loadPlugin, loadPlugins, parsePluginFile, splitFrontMatter, PluginManifestError } from './load-plugin';
export { loadWorld, LoreEntry, WorldManifest, WorldCharacter } from './world';
export type { LoadedWorld } from './world';
export { canonicalLocaleTag, promptLocaleOf, MAX_LOCALE_TAG_LENGTH } from './locale';
