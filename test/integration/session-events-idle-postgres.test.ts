import type { INestApplication } from '@nestjs/common';
import { Client } from 'pg';
import { createApiApp } from '../../apps/api/create-api-app';
import { SessionEvents } from '../../apps/api/session-events/session-events.service';
import { PlayClient } from '../../apps/play/play-client';
import { createEngine, type Engine, loadConfig } from '../../libs/engine';
import { type OpenStream, openEventStream } from '../support/sse-client';
import { type Stack, startStack } from '../support/stack';

const quiet = { log: () => undefined, warn: () => undefined, error: () => undefined };

/**
 * PostgreSQL + Redis: an API process and a worker process (the stack) write the session; an API
 * in this process (the same engine and app as `npm run start:api`, here so its reads can be
 * counted) serves idle streams. They read nothing while nothing is appended, share one LISTEN
 * connection whatever their number (the worker has its own, for its projector), and are woken by the appends of the other processes.
 */
describe('idle session event streams (PostgreSQL + Redis)', () => {
  let stack: Stack;
  let engine: Engine;
  let api: INestApplication;
  let player: PlayClient;

  beforeAll(async () => {
    stack = await startStack({ workers: 1 });
    engine = await createEngine(loadConfig({ ...process.env, ...stack.env, PORT: '0' }), 'api', quiet);
    api = await createApiApp(engine, { logger: false });
    await api.listen(0, '127.0.0.1');
    player = new PlayClient((await api.getUrl()).replace('[::1]', '127.0.0.1'), stack.apiKey);
  }, 120_000);

  afterAll(async () => {
    await api?.close();
    await engine?.close();
    await stack?.stop();
  });

  it('idle streams run no statement; one LISTEN serves them all; an append by another process wakes them', async () => {
    const { id } = await stack.client.createSession({ worldId: 'emberback' });
    const first = await stack.client.submit(id, 'Look around');
    expect(await stack.client.waitFor(first.executionId, 60_000)).toBe('committed');
    const reads = jest.spyOn(engine.store, 'readLog');
    const ofSession = () => reads.mock.calls.filter(([, , options]) => options?.streamId === id).length;
    const streams: OpenStream[] = [];
    const admin = new Client({ connectionString: stack.adminUrl });
    await admin.connect();
    /** The database's LISTEN connections: one per process (`SharedListen`), whatever it listens for. */
    const listening = async () =>
      Number(
        (await admin.query<{ n: string }>(`select count(*) as n from pg_stat_activity where datname = current_database() and query ilike 'listen %'`)).rows[0]
          .n,
      );
    try {
      // the stack's processes listen already (the worker's projector for appends, both for ended executions)
      const listeners = await listening();
      for (let i = 0; i < 5; i++) streams.push(await openEventStream(player, id));
      // each starts at the latest committed turn: the first turn's commit, nothing before it
      for (const s of streams) expect(await s.until(() => true)).toMatchObject({ type: 'committed', data: { executionId: first.executionId } });
      await new Promise((r) => setTimeout(r, 200)); // their last (empty) reads, then idle
      const before = ofSession();
      await new Promise((r) => setTimeout(r, 3_000));
      expect(ofSession()).toBe(before);
      expect(engine.appends.listenState).toBe('listening');
      // the five streams on this process's one LISTEN connection (opened now, unless it listened for ended executions already)
      expect(await listening()).toBeLessThanOrEqual(listeners + 1);
      // the stack's API appends the input, its worker the turn: each stream hears of it (the safety poll is 30 s)
      const next = await stack.client.submit(id, 'Walk to the river');
      for (const s of streams) await s.until((e) => e.type === 'committed' && e.data.executionId === next.executionId);
    } finally {
      await admin.end();
      reads.mockRestore();
      for (const s of streams) s.close();
    }
    const registry = api.get(SessionEvents);
    const until = Date.now() + 10_000;
    while ((registry.open.feeds > 0 || engine.appends.size > 0) && Date.now() < until) await new Promise((r) => setTimeout(r, 25));
    expect(registry.open).toEqual({ feeds: 0, tenants: 0, keys: 0 });
    expect(engine.appends.size).toBe(0);
  }, 60_000);
});
