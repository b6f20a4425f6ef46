/** The runtime catalog and its generations: the loaded plugins, their runtimes and static segments, the worlds, plugin reload. */
export { CatalogGenerations, DEFAULT_GENERATIONS_KEPT, PluginGenerationUnavailableError, catalogGeneration, executionCatalog } from './catalog-generations';
export { loadCatalog, reloadPlugins } from './plugin-reload';
export type { PluginReload } from './plugin-reload';
export { DEFAULT_STAGES, RuntimeCatalog } from './runtime-catalog';
export type { CatalogRuntime } from './runtime-catalog';
export { staticSegments } from './static-segments';
export { WorldCatalog, WorldNotFoundError, worldLorebook } from './world-catalog';
