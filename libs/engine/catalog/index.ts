/** The runtime catalog and its generations: the loaded plugins, their runtimes and static segments, the worlds, plugin reload. */
export { CatalogGenerations, DEFAULT_GENERATIONS_KEPT, PluginGenerationUnavailableError, executionCatalog } from './catalog-generations';
export { catalogGeneration } from './generation-id';
export { loadCatalog, reloadPlugins } from './plugin-reload';
export type { PluginReload } from './plugin-reload';
export { DEFAULT_STAGES, RuntimeCatalog } from './runtime-catalog';
export type { CatalogRuntime } from './runtime-catalog';
export { staticSegments } from './static-segments';
export { WorldCatalog, WorldNotFoundError, worldLorebook, TENANT_WORLD_ID, loggedWorldId } from './world-catalog';
export type { WorldLoader, WorldRef } from './world-catalog';
export { EMIT_EVENT, FRAMEWORK_TOOLS, GET_CHARACTER, isFrameworkTool, RUNTIME_DONE, WORLD_DIMENSION_GET, WORLD_DIMENSION_LIST } from './framework-tools';
export type { FrameworkToolName } from './framework-tools';
