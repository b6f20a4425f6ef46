import { mkdirSync } from 'node:fs';
import { createEngine, loadConfig, serveMetrics } from '../libs/engine';
import { ensureBootstrapTenant } from './api/bootstrap-tenant';
import { createApiApp } from './api/create-api-app';
import { boundAddress, describeModels } from './banner';
import { devKeyFile, engineUrlRemover, ensureDevTenant, writeEngineUrl } from './dev-tenant';
import { startTracing } from '../libs/telemetry';
import { closeOnSignals, gracefulEngine, reloadPluginsOnHangup, runMain } from './process-lifecycle';
import { createWorkerApp } from './worker/create-worker-app';

/**
 * `npm start`: API and worker in one process. With no DATABASE_URL / REDIS_URL this is the
 * embedded default: PGlite in the data directory, the in-process queue, and the provider emulator.
 */
async function main() {
  const config = loadConfig();
  const embedded = config.database.kind === 'pglite';
  if (embedded) mkdirSync(config.dataDir, { recursive: true });
  // the ready line comes once the database is open and migrated (a first embedded start makes it: several seconds)
  console.log(`Covel engine starting (database: ${embedded ? `PGlite in ${config.dataDir}` : 'PostgreSQL'})`);
  // OpenTelemetry traces when OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT is set; nothing registered otherwise
  const tracing = await startTracing({ defaultServiceName: 'covel' });
  const engine = await createEngine(config, 'all');
  // the data directory is ours now (PGlite's lock): a stale URL (another port) is never read while this one starts
  if (embedded) writeEngineUrl(config.dataDir, null);
  await ensureBootstrapTenant(engine);
  // a development tenant with a printed key only on the embedded default, never in a real PostgreSQL
  const apiKey = embedded ? await ensureDevTenant(engine) : null;
  const worker = await createWorkerApp(engine);
  await worker.init();
  const api = await createApiApp(engine);
  await api.listen(config.port, config.host);
  // COVEL_METRICS_PORT: /metrics with no key on its own port (kept off the public network); PORT's needs the admin key
  const metrics = config.metricsPort === null ? null : await serveMetrics({ metrics: engine.metrics, port: config.metricsPort, host: config.host });
  // before the ready line: a signal right after it is handled. The URL file first (npm run play no longer finds a closing engine),
  // then the API (no new input), the worker (sweeper, projector), the engine (running jobs within the grace period, stores, lock), spans
  closeOnSignals(
    [
      ...(embedded ? [engineUrlRemover(config.dataDir)] : []),
      api,
      ...(metrics ? [metrics] : []),
      worker,
      gracefulEngine(engine),
      ...(tracing ? [tracing] : []),
    ],
    {
      log: (line) => engine.logger.log(line),
    },
  );
  reloadPluginsOnHangup(engine);
  const url = (await api.getUrl()).replace('[::1]', 'localhost');
  if (embedded) writeEngineUrl(config.dataDir, url); // npm run play finds this engine whatever its PORT
  const slots = Object.entries(engine.providers.config.slots).map(([name, slot]) => ({ name, protocol: slot.protocol }));
  console.log(
    [
      `Covel engine ready at ${url}`,
      `  bound to: ${boundAddress(api)} (COVEL_HOST)`,
      `  database: ${config.database.kind === 'pglite' ? `PGlite (${config.database.dataDir})` : 'PostgreSQL'}`,
      `  queue:    ${config.redisUrl ? 'BullMQ' : 'in-process'}`,
      `  model:    ${describeModels(slots, config.env, engine.emulator?.url ?? null)}`,
      apiKey
        ? `  dev key:  ${apiKey}   (also in ${devKeyFile(config.dataDir)})`
        : `  tenants:  none created here: npm run tenant:create -- <name> prints a key${config.bootstrapApiKey ? ' (or use COVEL_BOOTSTRAP_API_KEY)' : ''}`,
      apiKey ? `Play in another terminal: npm run play (or in the browser: ${url}/inspector#/play)` : null,
      `See what the model saw: ${url}/inspector`,
    ]
      .filter((line) => line !== null)
      .join('\n'),
  );
}

runMain(main);
