import Module from 'node:module';
import { delimiter, join, relative, isAbsolute } from 'node:path';
import type { LoadedPlugin } from '../../plugins-sdk';

/** Node's module loader, with the one internal it re-reads `NODE_PATH` through (stable since Node 0.x). */
const loader = Module as unknown as { _initPaths?: () => void };

const inside = (root: string, path: string) => {
  const rel = relative(root, path);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
};

/**
 * Lets plugins that live outside the engine's folder (`COVEL_PLUGINS`) resolve packages the way
 * `NODE_PATH` does: Node looks in the plugin's own `node_modules` chain first and only then in the
 * engine's `node_modules`, which is appended to `NODE_PATH` (kept in order, once) and re-read.
 * Every module of such a plugin gets the fallback, its nested files included. Nothing changes
 * when every plugin is inside the engine's folder (the built-ins and `COVEL_PLUGINS_DIR` under it).
 * Returns the folder added, or null.
 */
export function engineModulesFallback(plugins: readonly LoadedPlugin[], engineRoot: string): string | null {
  if (plugins.every((p) => inside(engineRoot, p.root))) return null;
  const modules = join(engineRoot, 'node_modules');
  const current = (process.env.NODE_PATH ?? '').split(delimiter).filter((d) => d !== '');
  if (current.includes(modules)) return null;
  process.env.NODE_PATH = [...current, modules].join(delimiter);
  loader._initPaths?.();
  return modules;
}
