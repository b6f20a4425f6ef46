import { ConfigError, createEngine, loadConfig, serveMetrics } from '../../libs/engine';
import { startTracing } from '../../libs/telemetry';
import { closeOnSignals, gracefulEngine, reloadPluginsOnHangup, runMain } from '../process-lifecycle';
import { createWorkerApp } from './create-worker-app';

/** `npm run start:worker`: a worker process (BullMQ when REDIS_URL is set). */
async function main() {
  const config = loadConfig();
  if (!config.redisUrl)
    throw new ConfigError([{ path: 'REDIS_URL', message: 'start:worker needs REDIS_URL (and DATABASE_URL); `npm start` runs everything in one process' }]);
  // OpenTelemetry traces when OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT is set; nothing registered otherwise
  const tracing = await startTracing({ defaultServiceName: 'covel-worker' });
  const engine = await createEngine(config, 'worker');
  const app = await createWorkerApp(engine);
  await app.init();
  // COVEL_METRICS_PORT: this worker's GET /metrics (the API serves its own on PORT)
  const metrics = config.metricsPort === null ? null : await serveMetrics({ metrics: engine.metrics, port: config.metricsPort, host: config.host });
  // handlers first: a signal sent right after the ready line must still close cleanly
  closeOnSignals([...(metrics ? [metrics] : []), app, gracefulEngine(engine), ...(tracing ? [tracing] : [])], { log: (line) => engine.logger.log(line) });
  reloadPluginsOnHangup(engine);
  console.log(`covel worker ${engine.workerId} ready (concurrency ${config.worker.concurrency}${metrics ? `, metrics on :${metrics.port}/metrics` : ''})`);
}

runMain(main);
