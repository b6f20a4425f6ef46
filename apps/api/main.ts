import { ConfigError, createEngine, loadConfig, serveMetrics } from '../../libs/engine';
import { boundAddress } from '../banner';
import { ensureBootstrapTenant } from './bootstrap-tenant';
import { createApiApp } from './create-api-app';
import { startTracing } from '../../libs/telemetry';
import { closeOnSignals, gracefulEngine, reloadPluginsOnHangup, runMain } from '../process-lifecycle';

/** `npm run start:api`: the HTTP API alone (workers run as `npm run start:worker`). */
async function main() {
  const config = loadConfig();
  if (!config.redisUrl) {
    throw new ConfigError([{ path: 'REDIS_URL', message: 'start:api needs REDIS_URL (and DATABASE_URL); `npm start` runs everything in one process' }]);
  }
  // OpenTelemetry traces when OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT is set; nothing registered otherwise
  const tracing = await startTracing({ defaultServiceName: 'covel-api' });
  const engine = await createEngine(config, 'api');
  await ensureBootstrapTenant(engine);
  const app = await createApiApp(engine);
  await app.listen(config.port, config.host);
  // COVEL_METRICS_PORT: /metrics with no key on its own port (kept off the public network); PORT's needs the admin key
  const metrics = config.metricsPort === null ? null : await serveMetrics({ metrics: engine.metrics, port: config.metricsPort, host: config.host });
  closeOnSignals([app, ...(metrics ? [metrics] : []), gracefulEngine(engine), ...(tracing ? [tracing] : [])], { log: (line) => engine.logger.log(line) });
  reloadPluginsOnHangup(engine);
  console.log(`covel api listening on ${await app.getUrl()} (bound to ${boundAddress(app)}, COVEL_HOST)`);
}

runMain(main);
