import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PlayClient } from '../../apps/play/play-client';
import { retryCounter, submitRetrying } from '../../bench/load/players';

/**
 * The load benches try a refused request again (503: the API overloaded; 429: the tenant's rate
 * limit) and count the 429s apart, so a report shows the default rate limit never touched the run.
 */
describe('bench retries', () => {
  let server: Server;
  let baseUrl: string;
  const answers: number[] = [];
  const keys = new Set<string>();

  beforeAll(async () => {
    server = createServer((req, res) => {
      keys.add(String(req.headers['idempotency-key']));
      const status = answers.shift() ?? 202;
      res.writeHead(status, { 'content-type': 'application/json', ...(status === 202 ? {} : { 'retry-after': '0' }) });
      res.end(JSON.stringify(status === 202 ? { executionId: 'e1', turnId: 't1' } : { code: status === 429 ? 'RATE_LIMITED' : 'UNAVAILABLE' }));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  it('submitRetrying counts the 429s apart from the other refusals, and retries with the same Idempotency-Key', async () => {
    answers.push(429, 503, 429, 503, 503);
    const { count, onRetry } = retryCounter();
    const client = new PlayClient(baseUrl, 'cvl_test');
    const accepted = await submitRetrying({ client, sessionId: 's1', text: 'look', deadline: Date.now() + 60_000, onRetry });
    expect(accepted).toEqual({ executionId: 'e1', turnId: 't1' });
    expect(count).toEqual({ retries: 5, rateLimited: 2 });
    expect(keys.size).toBe(1);
  }, 30_000);
});
