import { type LoadedPlugin, loadPluginFolders } from '../../plugins-sdk';
import type { CatalogGenerations } from './catalog-generations';
import type { EngineConfig } from '../config/config';
import type { Logger } from '../logging/logger';
import { DEFAULT_BLOCKING_WARN_MS, PluginHost } from '../plugin-host';
import { engineModulesFallback } from '../plugin-host/package-fallback';
import { RuntimeCatalog } from './runtime-catalog';

type PluginFolders = Pick<EngineConfig, 'pluginsDir'> & {
  plugins: Pick<EngineConfig['plugins'], 'handlerTimeoutMs'> & Partial<Pick<EngineConfig['plugins'], 'blockingWarnMs'>>;
} & Partial<Pick<EngineConfig, 'extraPluginDirs' | 'engineRoot'>>;

/**
 * Loads the plugin folders (`pluginsDir`, then `COVEL_PLUGINS`'s), runs each server entry's
 * `register(api)` and checks the catalog (start-up, and each reload).
 */
export async function loadCatalog(config: PluginFolders, loaded?: readonly LoadedPlugin[], logger?: Logger): Promise<RuntimeCatalog> {
  const plugins = loaded ? [...loaded] : loadPluginFolders([config.pluginsDir, ...(config.extraPluginDirs ?? [])]);
  // a plugin outside the engine's folder resolves packages from its own folder, then the engine's
  if (config.engineRoot) engineModulesFallback(plugins, config.engineRoot);
  // each server entry's register(api), once; a bad entry stops start-up naming the plugin
  const host = await PluginHost.load(plugins, {
    handlerTimeoutMs: config.plugins.handlerTimeoutMs,
    blocking: logger ? { thresholdMs: config.plugins.blockingWarnMs ?? DEFAULT_BLOCKING_WARN_MS, report: blockingWarning(logger) } : null,
  });
  return new RuntimeCatalog(plugins, undefined, host);
}

/**
 * A warning naming the plugin whose handler held the event loop: nothing else in the process ran
 * meanwhile (with `npm start`, the HTTP API did not answer, `/health/live` included).
 */
const blockingWarning =
  (logger: Logger) =>
  (report: { pluginId: string; point: string; handlerId: string; ms: number }): void =>
    logger.warn(
      `plugin ${report.pluginId} blocked the event loop for ${Math.round(report.ms)} ms in ${report.point} "${report.handlerId}" (synchronous code: nothing else in this process ran meanwhile, the HTTP API included)`,
      { pluginId: report.pluginId, point: report.point, handlerId: report.handlerId, blockedMs: Math.round(report.ms) },
    );

export interface PluginReload {
  /** The current registry generation after the reload. */
  generation: string;
  /** False when the files gave the generation already current (nothing changed). */
  changed: boolean;
  /** Generations held for running executions, oldest first. */
  held: string[];
}

/**
 * Reads the plugin folders again and makes them the current registry generation: executions
 * started from now on capture it; executions already running keep the generation they captured
 * (held in memory, see `CatalogGenerations`). A bad manifest or entry rejects the reload and
 * leaves the current generation in place. Server entry modules are not re-imported (Node's module
 * cache): `register(api)` runs again on the module loaded first, so a reload picks up manifests,
 * bodies and static segments; changed entry code needs a restart.
 */
export async function reloadPlugins(args: {
  config: PluginFolders;
  generations: CatalogGenerations;
  /** The worker's turn dependencies, whose `catalog` becomes the new current one. */
  turnDeps: { catalog: RuntimeCatalog } | null;
  logger: Logger;
}): Promise<PluginReload> {
  const next = await loadCatalog(args.config, undefined, args.logger);
  const changed = args.generations.install(next);
  const current = args.generations.current;
  if (args.turnDeps) args.turnDeps.catalog = current;
  args.logger.log(changed ? `plugins reloaded: registry generation ${current.generation}` : `plugins reloaded: unchanged (${current.generation})`);
  return { generation: current.generation, changed, held: args.generations.ids() };
}
