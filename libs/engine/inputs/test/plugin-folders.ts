import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { loadPlugins } from '../../../plugins-sdk';
import { RuntimeCatalog } from '../../catalog/runtime-catalog';

/**
 * Catalogs of plugin folders written to temporary directories (`catalogOf({ 'a/PLUGIN.md': … })`),
 * removed by `cleanUp` (call it in `afterAll`).
 */
export function pluginFolders(prefix: string): { catalogOf(files: Record<string, string>): RuntimeCatalog; cleanUp(): void } {
  const dirs: string[] = [];
  return {
    catalogOf(files) {
      const dir = mkdtempSync(join(tmpdir(), prefix));
      dirs.push(dir);
      for (const [name, text] of Object.entries(files)) {
        mkdirSync(dirname(join(dir, name)), { recursive: true });
        writeFileSync(join(dir, name), text);
      }
      return new RuntimeCatalog(loadPlugins(dir));
    },
    cleanUp: () => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })),
  };
}

/** A PLUGIN.md with an inline runtime (`runtime` the YAML lines under `runtime:`). */
export const plugin = (id: string, runtime: string) => `---\nid: ${id}\nname: ${id}\nversion: "1"\nruntime:\n${runtime}\n---\n${id} body.`;
