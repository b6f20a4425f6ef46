import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Engine } from '../libs/engine';

export const devKeyFile = (dataDir: string) => join(dataDir, 'dev-api-key');

/** Where the embedded default writes the URL it listens on, next to its dev key: `npm run play` reads it. */
export const engineUrlFile = (dataDir: string) => join(dataDir, 'engine-url');

/** `npm start` on the embedded default: the URL it listens on (`null` while starting: a stale one is removed). */
export function writeEngineUrl(dataDir: string, url: string | null): void {
  const file = engineUrlFile(dataDir);
  if (url === null) return rmSync(file, { force: true });
  mkdirSync(dirname(file), { recursive: true });
  // written whole or not at all: a reader never sees half a URL
  const partial = `${file}.${process.pid}.tmp`;
  writeFileSync(partial, `${url}\n`);
  renameSync(partial, file);
}

/** Removes the URL file on shutdown (the first thing a stop does, so `npm run play` no longer finds a closing engine). */
export const engineUrlRemover = (dataDir: string) => ({
  close: async () => writeEngineUrl(dataDir, null),
});

/**
 * The embedded default's development tenant: created once, its key kept in the data directory
 * (mode 0600) so `npm run play` finds it. Only the key's hash is in the database.
 */
export async function ensureDevTenant(engine: Engine): Promise<string> {
  const file = devKeyFile(engine.config.dataDir);
  if (existsSync(file)) {
    const key = readFileSync(file, 'utf8').trim();
    if (await engine.tenants.findByApiKey(key)) return key;
  }
  const { apiKey } = await engine.tenants.create('development');
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, `${apiKey}\n`, { mode: 0o600 });
  chmodSync(file, 0o600);
  return apiKey;
}
