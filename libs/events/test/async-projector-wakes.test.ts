import { sql } from 'kysely';
import {
  AsyncProjector,
  type AppendWakes,
  EventStore,
  migrateToLatest,
  type NewEvent,
  openDatabase,
  type OpenDatabase,
  SessionAppends,
  traceEventsProjection,
} from '..';
import { QueryCounter } from '../../../test/support/query-counter';

/**
 * The projector's background loop woken by the appends (the events table's NOTIFY through
 * SessionAppends, PGlite here) instead of polling: idle, it runs no statement; an append wakes it;
 * a notification it never hears is caught up by the safety net; its leases are renewed meanwhile.
 */
describe('AsyncProjector woken by appends (PGlite)', () => {
  let open: OpenDatabase;
  let store: EventStore;
  let appends: SessionAppends;
  const quiet = { log: () => undefined, warn: () => undefined };
  beforeEach(async () => {
    open = await openDatabase({ kind: 'pglite' });
    await migrateToLatest(open.db);
    store = new EventStore(open.db);
    appends = new SessionAppends({ listen: (c, n, o) => open.listen(c, n, o) });
  });
  afterEach(async () => {
    await appends.close();
    await open.close();
  });

  let calls = 0;
  async function append(session: string): Promise<void> {
    const version = await store.streamVersion(session);
    const events: NewEvent[] = [
      {
        type: 'llm.calling@1',
        data: {
          executionId: 'e',
          turnId: 't',
          attempt: 1,
          callId: `c${++calls}`,
          pluginId: 'p',
          runtimeId: 'r',
          provider: 'openai-chat',
          model: 'm',
          body: '{}',
        },
      },
    ];
    if (version === 0) events.unshift({ type: 'session.created@1', data: { sessionId: session, worldId: null, locale: 'en' } });
    await store.append({ tenantId: 'tenant', streamId: session, expectedVersion: version, events });
  }
  const traced = async () => Number((await sql<{ n: number }>`select count(*)::int as n from trace_events`.execute(open.db)).rows[0].n);
  const reach = (p: AsyncProjector, streamId: string) => p.waitFor({ projection: traceEventsProjection.name, streamId, timeoutMs: 20_000 });
  const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

  it('idle it runs no statement; an append wakes it, and a burst of appends is one pass', async () => {
    const counter = new QueryCounter();
    const p = new AsyncProjector({
      db: open.db.withPlugin(counter),
      projections: [traceEventsProjection],
      owner: 'A',
      logger: quiet,
      appends,
      idleDelayMs: 50,
      safetyNetMs: 60_000,
    });
    await append('s1');
    p.start();
    try {
      expect(await reach(p, 's1')).toEqual({ status: 'reached' });
      expect(appends.size).toBe(1);
      await pause(300); // its gathering pause and last pass, then idle
      const idle = counter.queries;
      await pause(1_000); // 20 polls' worth at 50 ms
      expect(counter.queries).toBe(idle);

      for (let i = 0; i < 10; i++) await append(`b${i}`);
      for (let i = 0; i < 10; i++) expect(await reach(p, `b${i}`)).toEqual({ status: 'reached' });
      await pause(300);
      const burst = counter.queries - idle;
      expect(await traced()).toBe(11);
      // one pass (one read, the shards' writes) and at most one more, not one per append
      expect(burst).toBeLessThan(2 * (1 + 16 * 2));
      await pause(1_000);
      expect(counter.queries - idle).toBe(burst);
    } finally {
      await p.stop();
    }
    expect(appends.size).toBe(0);
  }, 60_000);

  it('a notification it never hears is caught up by the safety net, and its leases are renewed before they run out', async () => {
    const deaf: AppendWakes = { subscribeAll: () => Promise.resolve(() => undefined) };
    // a lease of 800 ms: the safety net is held to a quarter of it (the 60 s asked for would let it run out)
    const p = new AsyncProjector({
      db: open.db,
      projections: [traceEventsProjection],
      owner: 'A',
      logger: quiet,
      appends: deaf,
      leaseMs: 800,
      safetyNetMs: 60_000,
    });
    p.start();
    try {
      await pause(200);
      await append('missed');
      expect(await reach(p, 'missed')).toEqual({ status: 'reached' });
      await pause(2_000); // 2.5 leases
      const [status] = await p.status();
      expect(new Set(status.shards.map((s) => s.owner))).toEqual(new Set(['A']));
      for (const shard of status.shards) expect(Date.parse(shard.leaseUntil!)).toBeGreaterThan(Date.now());
    } finally {
      await p.stop();
    }
  }, 60_000);
});
