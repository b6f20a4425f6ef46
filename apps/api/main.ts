import { createEngine, loadConfig } from '../../libs/engine';
import { ensureBootstrapTenant } from './bootstrap-tenant';
import { createApiApp } from './create-api-app';
import { closeOnSignals, runMain } from '../process-lifecycle';

/** `npm run start:api`: the HTTP API alone (workers run as `npm run start:worker`). */
async function main() {
  const config = loadConfig();
  if (!config.redisUrl) throw new Error('start:api needs REDIS_URL (and DATABASE_URL); `npm start` runs everything in one process');
  const engine = await createEngine(config, 'api');
  await ensureBootstrapTenant(engine);
  const app = await createApiApp(engine);
  await app.listen(config.port, '0.0.0.0');
  console.log(`covel api listening on ${await app.getUrl()}`);
  closeOnSignals(app, engine);
}

runMain(main);
