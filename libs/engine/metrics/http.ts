import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { EngineMetrics } from './engine-metrics';

export interface MetricsServer {
  /** The bound port (the one asked for, or the one given for 0). */
  port: number;
  close(): Promise<void>;
}

/**
 * A worker's metrics listener (`COVEL_METRICS_PORT`): `GET /metrics` answers the exposition text,
 * `GET /health/live` that the process answers (the image's HEALTHCHECK, like the API's route of the
 * same name), anything else 404. The API serves both on its own port instead.
 */
export async function serveMetrics(options: { metrics: EngineMetrics; port: number; host: string }): Promise<MetricsServer> {
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (req.method === 'GET' && path === '/health/live') {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ status: 'ok' }));
      return;
    }
    if (req.method !== 'GET' || path !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
      return;
    }
    options.metrics.exposition().then(
      ({ contentType, body }) => res.writeHead(200, { 'content-type': contentType }).end(body),
      (error: unknown) => res.writeHead(500, { 'content-type': 'text/plain' }).end(`metrics failed: ${String(error)}\n`),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
