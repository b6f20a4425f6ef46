export * from './manifest';
export { loadPlugin, loadPlugins, parsePluginFile, splitFrontMatter, PluginManifestError } from './load-plugin';
