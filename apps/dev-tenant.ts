import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Engine } from '../libs/engine';

export const devKeyFile = (dataDir: string) => join(dataDir, 'dev-api-key');

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
