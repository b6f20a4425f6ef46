import { copyFileSync, existsSync, mkdirSync, statSync, writeFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { stringify } from 'yaml';
import type { ErrorIssue } from '../errors';
import { type LoadedPlugin, loadPlugin, loadPlugins, loadWorld, WorldManifest } from '../plugins-sdk';
import { HarnessOptionsError } from './errors';
import { zodIssues } from './options';

/** The repository's built-in plugins (`builtins: true`). */
export const BUILTIN_PLUGINS_DIR = resolve(__dirname, '..', '..', 'plugins');

/** The id an inline world gets when it names none. */
export const INLINE_WORLD_ID = 'fixture-world';

const message = (error: unknown) => (error instanceof Error ? error.message : String(error));

/**
 * Loads each plugin folder with the engine's own loader (a manifest error names the file and the
 * field, as at start-up) and the built-ins when asked; plugin ids must be unique across them.
 */
export function loadHarnessPlugins(folders: readonly string[], builtins: boolean): LoadedPlugin[] {
  const loaded: { plugin: LoadedPlugin; field: string }[] = [];
  const issues: ErrorIssue[] = [];
  folders.forEach((folder, i) => {
    const root = resolve(folder);
    const field = `plugins[${i}]`;
    if (!existsSync(join(root, 'PLUGIN.md'))) {
      issues.push({ path: field, message: `no PLUGIN.md in ${root}` });
      return;
    }
    try {
      loaded.push({ plugin: loadPlugin(root), field });
    } catch (error) {
      issues.push({ path: field, message: message(error) });
    }
  });
  if (builtins && existsSync(BUILTIN_PLUGINS_DIR)) for (const plugin of loadPlugins(BUILTIN_PLUGINS_DIR)) loaded.push({ plugin, field: 'builtins' });
  const seen = new Map<string, string>();
  for (const { plugin, field } of loaded) {
    const id = plugin.manifest.id;
    const first = seen.get(id);
    if (first !== undefined) issues.push({ path: field, message: `plugin id "${id}" is also the id of ${first}` });
    else seen.set(id, `${field} (${plugin.root})`);
  }
  if (issues.length > 0) throw new HarnessOptionsError(issues);
  return loaded.map((l) => l.plugin);
}

/**
 * Puts the fixture world where the engine's world catalog reads worlds (`<dir>/<id>/WORLD.md`) and
 * returns its id. A folder or file is copied as it is (the engine's loader validates it, naming
 * the file); an inline world is validated here (issues under `world.`) and written as a WORLD.md.
 */
export function placeWorld(world: string | Record<string, unknown>, worldsDir: string): string {
  if (typeof world === 'string') {
    const path = resolve(world);
    const file = existsSync(path) && statSync(path).isDirectory() ? join(path, 'WORLD.md') : path;
    if (!existsSync(file) || basename(file) !== 'WORLD.md') throw new HarnessOptionsError([{ path: 'world', message: `no WORLD.md at ${path}` }]);
    let id: string;
    try {
      id = loadWorld(file).id;
    } catch (error) {
      throw new HarnessOptionsError([{ path: 'world', message: message(error) }], { cause: error });
    }
    mkdirSync(join(worldsDir, id), { recursive: true });
    copyFileSync(file, join(worldsDir, id, 'WORLD.md'));
    return id;
  }
  const { lore, ...manifest } = world;
  if (lore !== undefined && typeof lore !== 'string') throw new HarnessOptionsError([{ path: 'world.lore', message: 'expected a string' }]);
  const front = { id: INLINE_WORLD_ID, ...manifest };
  const parsed = WorldManifest.safeParse(front);
  if (!parsed.success) throw new HarnessOptionsError(zodIssues(parsed.error, ['world']));
  const id = parsed.data.id;
  mkdirSync(join(worldsDir, id), { recursive: true });
  writeFileSync(join(worldsDir, id, 'WORLD.md'), `---\n${stringify(front)}---\n${lore ?? ''}\n`);
  return id;
}
