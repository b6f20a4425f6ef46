import { EngineMetrics, serveMetrics } from '..';

describe("a worker's listener (COVEL_METRICS_PORT)", () => {
  it('answers GET /health/live and GET /metrics; any other path is 404', async () => {
    const server = await serveMetrics({ metrics: new EngineMetrics(), port: 0, host: '127.0.0.1' });
    try {
      const base = `http://127.0.0.1:${server.port}`;
      const live = await fetch(`${base}/health/live`);
      expect(live.status).toBe(200);
      expect(await live.json()).toEqual({ status: 'ok' });
      const metrics = await fetch(`${base}/metrics`);
      expect(metrics.status).toBe(200);
      expect(await metrics.text()).toMatch(/^# HELP /m);
      expect((await fetch(`${base}/health`)).status).toBe(404);
      expect((await fetch(`${base}/health/live`, { method: 'POST' })).status).toBe(404);
    } finally {
      await server.close();
    }
  });
});
