import { execFile } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { EngineMetrics, serveMetrics } from '../../libs/engine';

/** tools/healthcheck.js, the image's HEALTHCHECK, run as Docker runs it: a process whose exit code is the verdict. */
const root = join(__dirname, '..', '..');
const healthcheck = (env: Record<string, string>) =>
  new Promise<number>((resolve) => {
    const clean: NodeJS.ProcessEnv = { ...process.env, ...env };
    for (const key of ['PORT', 'COVEL_METRICS_PORT', 'COVEL_HOST']) if (!(key in env)) delete clean[key];
    execFile(process.execPath, ['tools/healthcheck.js'], { cwd: root, env: clean }, (error) => resolve(error ? Number(error.code) : 0));
  });

const listen = (status: number) =>
  new Promise<Server>((resolve) => {
    const server = createServer((_req, res) => res.writeHead(status).end());
    server.listen(0, '127.0.0.1', () => resolve(server));
  });
const portOf = (server: Server) => String((server.address() as AddressInfo).port);
const close = (server: Server) => new Promise<void>((resolve) => server.close(() => resolve()));

describe('the image healthcheck (tools/healthcheck.js)', () => {
  it("a worker's listener (COVEL_METRICS_PORT) answering /health/live is healthy; a closed port is not", async () => {
    const worker = await serveMetrics({ metrics: new EngineMetrics(), port: 0, host: '127.0.0.1' });
    const closed = await listen(200);
    const closedPort = portOf(closed);
    await close(closed);
    try {
      expect(await healthcheck({ COVEL_METRICS_PORT: String(worker.port), PORT: closedPort })).toBe(0);
      expect(await healthcheck({ COVEL_METRICS_PORT: closedPort, PORT: closedPort })).toBe(1);
      expect(await healthcheck({ PORT: String(worker.port), COVEL_HOST: '0.0.0.0' })).toBe(0);
    } finally {
      await worker.close();
    }
  });

  it('an answer other than 200 is unhealthy', async () => {
    const failing = await listen(503);
    try {
      expect(await healthcheck({ PORT: portOf(failing) })).toBe(1);
    } finally {
      await close(failing);
    }
  });
});
