import { InvalidInputError } from '../../errors';
import { type LoadedWorld, PluginManifestError } from '../../plugins-sdk';
import type { RuntimeCatalog } from '../catalog/runtime-catalog';

/** Where a new session's plugin list is resolved (`SessionService` calls it with the session's world, see `SessionWorldResolver`). */
export type SessionPluginResolver = (args: { world: LoadedWorld | null; requested?: readonly string[] }) => string[] | undefined;

/**
 * The plugins a new session runs, as `session.created@1` records them: the ones the request names
 * (each must be loaded: a 400 naming `plugins.<i>`), else the world's `plugins` (those loaded), else
 * none recorded (undefined: the plugins enabled by default, `RuntimeCatalog.forSession`). The list
 * must hold together on its own (an input from a runtime left out is a 400 naming `plugins`).
 */
export function resolveSessionPlugins(args: { catalog: RuntimeCatalog; world: LoadedWorld | null; requested?: readonly string[] }): string[] | undefined {
  const loaded = args.catalog.plugins.map((p) => p.manifest.id);
  let list: string[];
  if (args.requested) {
    const issues = args.requested.flatMap((id, i) =>
      loaded.includes(id) ? [] : [{ path: `plugins.${i}`, message: `no loaded plugin "${id}" (loaded: ${loaded.join(', ')})` }],
    );
    if (issues.length > 0) throw new InvalidInputError(issues, 'UNKNOWN_PLUGIN');
    list = args.requested.slice();
  } else if (args.world?.plugins) {
    list = args.world.plugins.filter((id) => loaded.includes(id));
  } else {
    return undefined;
  }
  list = [...new Set(list)].sort();
  try {
    args.catalog.forSession(list);
  } catch (error) {
    if (!(error instanceof PluginManifestError)) throw error;
    throw new InvalidInputError([{ path: 'plugins', message: `these plugins do not run together: ${error.message}` }], 'INVALID_SESSION_PLUGINS');
  }
  return list;
}
