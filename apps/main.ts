import { mkdirSync } from 'node:fs';
import { createEngine, loadConfig } from '../libs/engine';
import { ensureBootstrapTenant } from './api/bootstrap-tenant';
import { createApiApp } from './api/create-api-app';
import { devKeyFile, ensureDevTenant } from './dev-tenant';
import { closeOnSignals, runMain } from './process-lifecycle';
import { createWorkerApp } from './worker/create-worker-app';

/**
 * `npm start`: API and worker in one process. With no DATABASE_URL / REDIS_URL this is the
 * embedded default: PGlite in the data directory, the in-process queue, and the provider emulator.
 */
async function main() {
  const config = loadConfig();
  mkdirSync(config.dataDir, { recursive: true });
  const engine = await createEngine(config, 'all');
  await ensureBootstrapTenant(engine);
  const apiKey = await ensureDevTenant(engine);
  const worker = await createWorkerApp(engine);
  await worker.init();
  const api = await createApiApp(engine);
  await api.listen(config.port, '127.0.0.1');
  const url = (await api.getUrl()).replace('[::1]', 'localhost');
  console.log(
    [
      `Covel engine ready at ${url}`,
      `  database: ${config.database.kind === 'pglite' ? `PGlite (${config.database.dataDir})` : 'PostgreSQL'}`,
      `  queue:    ${config.redisUrl ? 'BullMQ' : 'in-process'}`,
      `  model:    ${engine.emulator ? `offline provider emulator (${engine.emulator.url})` : 'real provider endpoint'}`,
      `  dev key:  ${apiKey}   (also in ${devKeyFile(config.dataDir)})`,
      `Play in another terminal: npm run play`,
    ].join('\n'),
  );
  closeOnSignals(api, worker, engine);
}

runMain(main);
