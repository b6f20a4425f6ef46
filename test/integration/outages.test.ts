import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { Client } from 'pg';
import { isDatabaseUnavailable, openDatabase } from '../../libs/events';
import { PlayClient } from '../../apps/play/play-client';
import { startRedisChild, type RedisChild } from '../support/redis-server';
import { createTestDatabase, freePort, type ManagedProcess, startApp } from '../support/stack';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy';

interface Health {
  status: string;
  database: { kind: string; ok: boolean; latencyMs: number };
  queue: { kind: string; ok: boolean; state: string };
  projections: { name: string; state: string; lag: number }[] | null;
}

interface Answer {
  status: number;
  retryAfter: string | null;
  body: unknown;
}

describe('a PostgreSQL connection lost while checked out', () => {
  it('fails the next statement as unavailable instead of crashing the process with an unhandled error event', async () => {
    const database = await createTestDatabase();
    const direct = new URL(database.url);
    const proxy = await startTcpProxy({ host: direct.hostname, port: Number(direct.port || 5432) });
    const proxied = new URL(database.url);
    proxied.hostname = '127.0.0.1';
    proxied.port = String(proxy.port);
    const open = await openDatabase({ kind: 'postgres', url: proxied.toString() });
    try {
      const failure = await open.db
        .transaction()
        .execute(async (trx) => {
          await sql`select 1`.execute(trx);
          proxy.cut(); // the connection dies between two statements, while the transaction holds it
          await new Promise((r) => setTimeout(r, 200));
          await sql`select 1`.execute(trx);
        })
        .then(
          () => null,
          (error: unknown) => error,
        );
      expect(isDatabaseUnavailable(failure)).toBe(true);
      proxy.restore();
      // the pool dropped the dead client: the next call works
      expect((await sql<{ n: number }>`select 1 as n`.execute(open.db)).rows).toEqual([{ n: 1 }]);
    } finally {
      await open.close();
      await proxy.close();
      await database.drop();
    }
  }, 30_000);
});

/**
 * The API and a worker as child processes on the real PostgreSQL (behind a TCP proxy this test
 * cuts) and this test's own redis-server (killed and started again). The shared services are
 * never touched. Response times are logged for the report, not asserted.
 */
describe('outages of PostgreSQL and Redis: /health, 503 + Retry-After, recovery', () => {
  let redis: RedisChild;
  let redisProxy: TcpProxy;
  let pgProxy: TcpProxy;
  let database: { url: string; drop(): Promise<void> };
  let admin: Client;
  let api: ManagedProcess;
  let worker: ManagedProcess;
  let client: PlayClient;
  let baseUrl: string;
  let apiKey: string;
  let sessionId: string;
  let keyed: Answer;
  const timings: string[] = [];

  beforeAll(async () => {
    redis = await startRedisChild();
    // the API reaches Redis through a proxy too, to freeze it between an append and its enqueue
    redisProxy = await startTcpProxy({ host: '127.0.0.1', port: redis.port });
    database = await createTestDatabase();
    const direct = new URL(database.url);
    pgProxy = await startTcpProxy({ host: direct.hostname, port: Number(direct.port || 5432) });
    const proxied = new URL(database.url);
    proxied.hostname = '127.0.0.1';
    proxied.port = String(pgProxy.port);
    admin = new Client({ connectionString: database.url });
    await admin.connect();

    apiKey = `cvl_it_${randomBytes(16).toString('hex')}`;
    const port = await freePort();
    const env = {
      DATABASE_URL: proxied.toString(),
      COVEL_QUEUE_PREFIX: `covel-it-${randomBytes(4).toString('hex')}`,
      COVEL_BOOTSTRAP_API_KEY: apiKey,
      PORT: String(port),
      COVEL_SWEEP_INTERVAL_MS: '300',
      COVEL_SWEEP_STALLED_MS: '2000',
    };
    const migrate = await startApp('migrate', 'tools/migrate.ts', { ...env, REDIS_URL: redis.url }, /applied|up to date/);
    await migrate.exited;
    api = await startApp('api', 'apps/api/main.ts', { ...env, REDIS_URL: `redis://127.0.0.1:${redisProxy.port}` }, /listening on/);
    worker = await startApp('worker', 'apps/worker/main.ts', { ...env, REDIS_URL: redis.url, COVEL_WORKER_ID: 'w1' }, /ready/);
    baseUrl = `http://127.0.0.1:${port}`;
    client = new PlayClient(baseUrl, apiKey);
  }, 120_000);

  afterAll(async () => {
    console.log(`measured response times:\n  ${timings.join('\n  ')}`);
    if (process.env.OUTAGES_DUMP) console.log(`api:\n${api?.output()}\nworker:\n${worker?.output()}`);
    pgProxy?.restore();
    redisProxy?.restore();
    await api?.stop();
    await worker?.stop();
    await admin?.end();
    await redis?.kill();
    await redisProxy?.close();
    await pgProxy?.close();
    await database?.drop();
  }, 60_000);

  /** One request, timed; the time goes to the report. */
  async function timed(label: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Answer> {
    const started = performance.now();
    const res = await fetch(`${baseUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${apiKey}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const answer = (await res.json()) as unknown;
    timings.push(`${label}: ${res.status} in ${Math.round(performance.now() - started)} ms`);
    return { status: res.status, retryAfter: res.headers.get('retry-after'), body: answer };
  }

  async function health(label?: string): Promise<{ status: number; body: Health }> {
    const started = performance.now();
    const res = await fetch(`${baseUrl}/health`);
    const body = (await res.json()) as Health;
    if (label) timings.push(`${label}: ${res.status} in ${Math.round(performance.now() - started)} ms`);
    return { status: res.status, body };
  }

  /** Polls /health until it answers `status` (the processes notice an outage on their own). */
  async function healthBecomes(status: number, timeoutMs = 30_000): Promise<Health> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const h = await health();
      if (h.status === status) return h.body;
      if (Date.now() > deadline) throw new Error(`/health still ${h.status} after ${timeoutMs} ms: ${JSON.stringify(h.body)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  async function eventCount(streamId: string): Promise<number> {
    const r = await admin.query<{ n: string }>('select count(*) as n from events where stream_id = $1', [streamId]);
    return Number(r.rows[0].n);
  }

  async function userTexts(): Promise<string[]> {
    return (await client.messages(sessionId)).filter((m) => m.role === 'user').map((m) => m.text);
  }

  async function turnCommits(text: string) {
    const { executionId } = await client.submit(sessionId, text);
    await client.waitFor(executionId, 60_000);
    expect(await userTexts()).toContain(text);
  }

  it('all up: /health is 200 with every dependency ok and each async projection running', async () => {
    const { id } = await client.createSession();
    sessionId = id;
    await turnCommits('Light the lantern');
    // an input under an idempotency key, answered and run while all is up
    keyed = await timed('POST keyed input, all up', 'POST', `/v1/sessions/${sessionId}/inputs`, { text: 'ring the bell' }, { 'idempotency-key': 'bell-1' });
    expect(keyed.status).toBe(202);
    await client.waitFor((keyed.body as { executionId: string }).executionId, 60_000);
    const h = await health('GET /health, all up');
    expect(h.status).toBe(200);
    expect(h.body).toMatchObject({ status: 'ok', database: { kind: 'postgres', ok: true }, queue: { kind: 'bullmq', ok: true, state: 'ready' } });
    // the async projections (the inline ones are written with each append)
    expect(h.body.projections!.map((p) => p.name).sort()).toEqual(['prefix_reports', 'trace_events', 'usage']);
    expect(h.body.projections!.every((p) => p.state === 'running' && Number.isInteger(p.lag) && p.lag >= 0)).toBe(true);
  }, 90_000);

  it('Redis down: /health 503 (queue not ok), an input is 503 + Retry-After and nothing is appended', async () => {
    await redis.kill();
    const h = await healthBecomes(503);
    expect(h).toMatchObject({ status: 'unavailable', database: { ok: true }, queue: { kind: 'bullmq', ok: false } });
    await health('GET /health, Redis down');
    const before = await eventCount(sessionId);
    const res = await timed('POST inputs, Redis down', 'POST', `/v1/sessions/${sessionId}/inputs`, { text: 'into the dark' });
    expect(res).toMatchObject({ status: 503, retryAfter: '2', body: { code: 'QUEUE_UNAVAILABLE' } });
    expect(await eventCount(sessionId)).toBe(before);
    // a repeat of a recorded keyed input needs no queue: it gets its first answer, nothing appended
    const repeat = await timed(
      'POST keyed repeat, Redis down',
      'POST',
      `/v1/sessions/${sessionId}/inputs`,
      { text: 'ring the bell' },
      { 'idempotency-key': 'bell-1' },
    );
    expect(repeat).toMatchObject({ status: 202, body: keyed.body });
    expect(await eventCount(sessionId)).toBe(before);
    // what needs only the database still works
    expect((await timed('GET messages, Redis down', 'GET', `/v1/sessions/${sessionId}/messages`)).status).toBe(200);
  }, 60_000);

  it('Redis back: /health 200 and a turn commits', async () => {
    await redis.start();
    const h = await healthBecomes(200);
    expect(h.queue).toEqual({ kind: 'bullmq', ok: true, state: 'ready' });
    await turnCommits('The lantern again');
    expect(await userTexts()).not.toContain('into the dark');
  }, 90_000);

  it('Redis stops answering between the readiness check and the enqueue: 202 in bounded time, the input is kept and commits', async () => {
    const before = await eventCount(sessionId);
    redisProxy.freeze(); // the API's connection still looks ready, but nothing comes back
    const res = await timed('POST inputs, Redis frozen (enqueue bound)', 'POST', `/v1/sessions/${sessionId}/inputs`, { text: 'a frozen moment' });
    expect(res.status).toBe(202);
    expect(await eventCount(sessionId)).toBe(before + 1);
    expect(api.output()).toMatch(/enqueue of execution \S+ failed \(the turn queue did not take the job within 1500 ms\)/);
    redisProxy.restore();
    // the late add lands once Redis answers, or the sweeper enqueues the recorded input
    await client.waitFor((res.body as { executionId: string }).executionId, 60_000);
    expect(await userTexts()).toContain('a frozen moment');
  }, 120_000);

  it('PostgreSQL cut: /health 503 (database not ok), reads and writes are 503 + Retry-After, not 500', async () => {
    pgProxy.cut();
    const h = await healthBecomes(503);
    expect(h).toMatchObject({ status: 'unavailable', database: { kind: 'postgres', ok: false }, queue: { ok: true }, projections: null });
    await health('GET /health, PostgreSQL cut');
    for (const [label, method, path, body] of [
      ['GET messages, PostgreSQL cut', 'GET', `/v1/sessions/${sessionId}/messages`, undefined],
      ['POST inputs, PostgreSQL cut', 'POST', `/v1/sessions/${sessionId}/inputs`, { text: 'in the outage' }],
      ['POST sessions, PostgreSQL cut', 'POST', '/v1/sessions', {}],
    ] as const) {
      const res = await timed(label, method, path, body);
      expect({ label, status: res.status, retryAfter: res.retryAfter, body: res.body }).toEqual({
        label,
        status: 503,
        retryAfter: '2',
        body: expect.objectContaining({ code: 'DATABASE_UNAVAILABLE' }),
      });
    }
  }, 60_000);

  it('PostgreSQL restored: requests work again and a turn commits', async () => {
    pgProxy.restore();
    await healthBecomes(200);
    expect((await timed('GET messages, PostgreSQL back', 'GET', `/v1/sessions/${sessionId}/messages`)).status).toBe(200);
    await turnCommits('After the outage');
    expect(await userTexts()).not.toContain('in the outage');
  }, 90_000);

  it('both processes lived through both outages, with no unhandled rejection', () => {
    expect(api.child.exitCode).toBeNull();
    expect(worker.child.exitCode).toBeNull();
    for (const out of [api.output(), worker.output()]) expect(out).not.toMatch(/unhandled/i);
  });
});
