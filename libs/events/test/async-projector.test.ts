import { sql } from 'kysely';
import {
  AsyncProjector,
  EventStore,
  LOG_PARTITIONS,
  migrateToLatest,
  type NewEvent,
  openDatabase,
  type OpenDatabase,
  type Projection,
  traceEventsProjection,
} from '..';
import { applyBatch } from '../projections/async/apply-batch';
import { ensureShards, takeProjection } from '../projections/async/shard-rows';

/**
 * The projector of async projections over PGlite: shards shared by owners through claim + lease,
 * cursors moved by compare-and-set (never an event applied twice), a failing shard that stops
 * alone and recovers, and waiting for a position instead of working.
 */
describe('AsyncProjector (PGlite)', () => {
  let open: OpenDatabase;
  let store: EventStore;
  beforeEach(async () => {
    open = await openDatabase({ kind: 'pglite' });
    await migrateToLatest(open.db);
    store = new EventStore(open.db);
    calls = 0;
    faults.on = true;
  });
  afterEach(() => open.close());

  let calls = 0;
  function llmCalling(callId: string): NewEvent {
    return {
      type: 'llm.calling@1',
      data: { executionId: 'e', turnId: 't', attempt: 1, callId, pluginId: 'p', runtimeId: 'r', provider: 'openai-chat', model: 'm', body: '{"n":1}' },
    };
  }
  /** Appends `count` llm.calling events to the session (its first one a session.created). */
  async function append(session: string, count = 1): Promise<number> {
    const version = await store.streamVersion(session);
    const events: NewEvent[] = Array.from({ length: count }, () => llmCalling(`${session}-c${++calls}`));
    if (version === 0) events.unshift({ type: 'session.created@1', data: { sessionId: session, worldId: null, locale: 'en' } });
    return (await store.append({ tenantId: `tenant-${session}`, streamId: session, expectedVersion: version, events })).lastPosition;
  }
  const partitionOf = async (session: string) => Number((await sql<{ p: number }>`select (hashtext(${session}) & 15)::int as p`.execute(open.db)).rows[0].p);

  /** trace_events without "on conflict do nothing": applying an event twice is a unique violation, a visible failure. */
  const faults = { on: true, callId: '' };
  const strictTrace: Projection = {
    name: 'strict_trace',
    handles: ['llm.calling@1'],
    tables: ['trace_events'],
    async applyBatch(trx, events) {
      for (const event of events) {
        if (event.type !== 'llm.calling@1') continue;
        if (faults.on && event.data.callId === faults.callId) throw Object.assign(new Error(`cannot apply ${event.data.callId}`), { code: 'TEST_FAULT' });
        await trx
          .insertInto('trace_events')
          .values({
            global_position: String(event.globalPosition),
            tenant_id: event.tenantId,
            session_id: event.streamId,
            execution_id: event.data.executionId,
            turn_id: event.data.turnId,
            type: event.type,
            call_id: event.data.callId,
            plugin_id: event.data.pluginId,
            runtime_id: event.data.runtimeId,
            data: JSON.stringify(event.data),
            recorded_at: new Date(event.recordedAt),
          })
          .execute();
      }
    },
  };
  const logs: { level: 'log' | 'warn'; line: string }[] = [];
  const logger = { log: (line: string) => logs.push({ level: 'log', line }), warn: (line: string) => logs.push({ level: 'warn', line }) };
  const projector = (owner: string, options: Partial<ConstructorParameters<typeof AsyncProjector>[0]> = {}) =>
    new AsyncProjector({ db: open.db, projections: [strictTrace], owner, logger, retryDelayMs: 3_600_000, batchSize: 7, ...options });
  const traced = async () => (await open.db.selectFrom('trace_events').select('call_id').orderBy('global_position').execute()).map((r) => r.call_id);
  const owners = async () => {
    const rows = await open.db
      .selectFrom('projection_shards')
      .select(['owner', sql<number>`count(*)::int`.as('n')])
      .groupBy('owner')
      .execute();
    return Object.fromEntries(rows.map((r) => [r.owner ?? 'none', Number(r.n)]));
  };

  it('two projectors share the 16 shards, each event is applied once, and a dead owner’s shards are taken after its lease', async () => {
    const sessions = Array.from({ length: 24 }, (_, i) => `s${i}`);
    const a = projector('A', { leaseMs: 60_000 });
    const b = projector('B', { leaseMs: 60_000 });
    for (let round = 0; round < 8; round++) {
      for (const s of sessions) await append(s, 1 + (round % 3));
      // both at once, and a pass of each in turn: they converge to 8 shards each
      await Promise.all([a.runOnce(), b.runOnce()]);
    }
    await a.drain();
    await b.drain();
    expect(await owners()).toEqual({ A: 8, B: 8 });
    const status = (await a.status())[0];
    expect(status).toMatchObject({ name: 'strict_trace', state: 'running', lag: 0, failing: 0 });
    expect(status.shards).toHaveLength(LOG_PARTITIONS);
    // every event exactly once (a second apply would have failed on the primary key)
    const expected = (
      await open.db
        .selectFrom('events')
        .select(sql<string>`data->>'callId'`.as('c'))
        .where('type', '=', 'llm.calling@1')
        .orderBy('global_position')
        .execute()
    ).map((r) => r.c);
    expect(await traced()).toEqual(expected);
    expect(logs.filter((l) => l.level === 'warn')).toEqual([]);

    // A stops answering (a crash): its leases run out, then B takes its shards and goes on
    await sql`update projection_shards set lease_until = now() - interval '1 second' where owner = 'A'`.execute(open.db);
    for (const s of sessions) await append(s);
    await b.drain();
    expect(await owners()).toEqual({ B: 16 });
    expect((await b.status())[0].lag).toBe(0);
    expect((await traced()).length).toBe(expected.length + sessions.length);
    // a clean stop gives the shards back at once
    b.start();
    await b.stop();
    expect(await owners()).toEqual({ none: 16 });
  }, 60_000);

  it('an owner whose shard was taken cannot move its cursor: nothing it applied is written', async () => {
    await append('x', 3);
    const shard = await partitionOf('x');
    const a = projector('A');
    await a.status(); // creates the rows
    await sql`update projection_shards set owner = 'A', lease_until = now() + interval '1 minute' where shard = ${shard}`.execute(open.db);
    const entries = await store.readAfter({ transactionId: '0', globalPosition: 0 }, { partition: shard, limit: 10 });
    // B takes the shard while A holds a batch in hand
    await sql`update projection_shards set owner = 'B' where shard = ${shard}`.execute(open.db);
    const ctx = { db: open.db, owner: 'A', leaseMs: 60_000, retryDelayMs: 1000, maxRetryDelayMs: 1000, quarantineAfter: 5, logger };
    const outcome = await applyBatch(ctx, { projection: strictTrace, shard, from: { transactionId: '0', globalPosition: 0 }, failedPosition: null }, entries);
    expect(outcome).toEqual({ kind: 'lost' });
    expect(await traced()).toEqual([]);
    const row = await open.db
      .selectFrom('projection_shards')
      .selectAll()
      .where('projection', '=', 'strict_trace')
      .where('shard', '=', shard)
      .executeTakeFirstOrThrow();
    expect([row.owner, Number(row.global_position)]).toEqual(['B', 0]);
    // a stale cursor fails the same way, even for the owner
    await sql`update projection_shards set owner = 'A' where shard = ${shard}`.execute(open.db);
    await sql`update projection_shards set global_position = 1 where shard = ${shard}`.execute(open.db);
    expect(await applyBatch(ctx, { projection: strictTrace, shard, from: { transactionId: '0', globalPosition: 0 }, failedPosition: null }, entries)).toEqual({
      kind: 'lost',
    });
    expect(await traced()).toEqual([]);
  }, 60_000);

  it('a shard that cannot apply an event stops alone, shows in status, is logged once, and applies it once the fault is gone', async () => {
    const sessions = Array.from({ length: 20 }, (_, i) => `t${i}`);
    for (const s of sessions) await append(s, 2);
    const badSession = sessions[5];
    const badShard = await partitionOf(badSession);
    faults.callId = `${badSession}-c${calls + 2}`; // its next append's second call
    const badAt = await append(badSession, 3);
    for (const s of sessions) await append(s);
    const p = projector('A');
    await p.drain();

    const [status] = await p.status();
    expect(status).toMatchObject({ state: 'failing', failing: 1 });
    for (const shard of status.shards) {
      if (shard.shard === badShard) continue;
      expect([shard.shard, shard.state, shard.lag]).toEqual([shard.shard, 'running', 0]);
    }
    const stopped = status.shards[badShard];
    expect(stopped.state).toBe('failing');
    expect(stopped.failure).toMatchObject({ globalPosition: badAt - 1, eventType: 'llm.calling@1', errorCode: 'TEST_FAULT', attempts: 1 });
    expect(stopped.lag).toBeGreaterThan(0);
    // the events before the bad one are applied, the bad one and the shard's later ones are not
    const rows = await traced();
    expect(rows).toContain(`${badSession}-c${calls - sessions.length - 2}`);
    expect(rows).not.toContain(faults.callId);
    const otherSession = sessions.find((s, i) => i !== 5 && rows.includes(`${s}-c1`)) ?? sessions[0];
    expect(rows.filter((c) => c.startsWith(`${otherSession}-`))).toHaveLength(3);
    // logged once, with projection, shard, position, type, stream, tenant
    const warn = logs.filter((l) => l.level === 'warn');
    expect(warn).toHaveLength(1);
    expect(warn[0].line).toMatch(
      new RegExp(
        `projection strict_trace shard ${badShard} stopped at global position ${badAt - 1} \\(llm.calling@1\\) of stream ${badSession} \\(tenant tenant-${badSession}\\)`,
      ),
    );

    // a retry that fails again: attempts go up, no new log line
    await p.runOnce({ retryNow: true });
    expect((await p.status())[0].shards[badShard].failure).toMatchObject({ attempts: 2 });
    expect(logs.filter((l) => l.level === 'warn')).toHaveLength(1);

    // the fault fixed: the next retry applies it and the shard's later events
    faults.on = false;
    await p.drain({ retryNow: true });
    const [after] = await p.status();
    expect(after).toMatchObject({ state: 'running', failing: 0, lag: 0 });
    expect(await traced()).toContain(faults.callId);
    expect(logs.at(-1)!.line).toMatch(new RegExp(`shard ${badShard} runs again`));
  }, 60_000);

  it('waitFor: reached once the shard passed the stream’s last event, timed-out or stopped as values', async () => {
    await append('w', 2);
    const p = projector('A', { idleDelayMs: 10 });
    expect(await p.waitFor({ projection: 'strict_trace', streamId: 'w', timeoutMs: 30 })).toEqual({ status: 'timed-out', shard: await partitionOf('w') });
    expect(await p.waitFor({ projection: 'strict_trace', streamId: 'no-such-stream', timeoutMs: 30 })).toEqual({ status: 'reached' });
    p.start();
    try {
      expect(await p.waitFor({ projection: 'strict_trace', streamId: 'w', timeoutMs: 10_000 })).toEqual({ status: 'reached' });
      faults.callId = `w-c${calls + 1}`;
      const at = await append('w');
      expect(await p.waitFor({ projection: 'strict_trace', streamId: 'w', globalPosition: at, timeoutMs: 10_000 })).toEqual({
        status: 'stopped',
        shard: await partitionOf('w'),
      });
    } finally {
      await p.stop();
    }
    await expect(p.waitFor({ projection: 'nope', streamId: 'w', timeoutMs: 10 })).rejects.toThrow(/unknown async projection "nope"/);
  }, 60_000);

  it('a stop during a backlog ends the pass after the round under way, not after every batch of it', async () => {
    await append('s', 70); // 71 events on one shard: eleven batches of 7
    let entered: () => void = () => undefined;
    const inFirstBatch = new Promise<void>((resolve) => (entered = resolve));
    let release: () => void = () => undefined;
    const released = new Promise<void>((resolve) => (release = resolve));
    let batches = 0;
    const held: Projection = {
      ...strictTrace,
      async applyBatch(trx, events) {
        if (++batches === 1) {
          entered();
          await released;
        }
        await strictTrace.applyBatch(trx, events);
      },
    };
    const p = projector('A', { projections: [held], idleDelayMs: 10 });
    p.start();
    await inFirstBatch;
    const stopped = p.stop(); // while the first round's transaction is open
    release();
    await stopped;
    // the round under way committed; none after it (the pass would go on for 10 rounds)
    expect(batches).toBe(1);
    expect(await traced()).toHaveLength(6); // the first batch: session.created and six calls
  }, 60_000);

  it('the real trace_events projection through the projector matches its rows event by event', async () => {
    for (let i = 0; i < 5; i++) await append(`r${i}`, 4);
    const p = new AsyncProjector({ db: open.db, projections: [traceEventsProjection], owner: 'A', logger });
    expect(await p.drain()).toBe(20);
    expect(
      (
        await open.db
          .selectFrom('trace_events')
          .select(sql<number>`count(*)::int`.as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    ).toBe(20);
  }, 60_000);
  it('a lease granted late in a long transaction runs from when it is granted, not from when the transaction began', async () => {
    await ensureShards(open.db, ['trace_events']);
    await open.db.transaction().execute(async (trx) => {
      // a shared round that took 3 s before it renewed its leases: the transaction begun (now() fixed), then
      // 3 s on a timer (PGlite's pg_sleep polls the clock: a second of it costs about 0.4 s of CPU)
      await sql`select now()`.execute(trx);
      await new Promise((resolve) => setTimeout(resolve, 3000));
      expect(await takeProjection(trx, { name: 'trace_events', owner: 'w', leaseMs: 6000 })).toBe(LOG_PARTITIONS);
    });
    const { rows } = await sql<{ left: number }>`
      select min(extract(epoch from (lease_until - clock_timestamp())) * 1000)::float8 as left
      from projection_shards where projection = 'trace_events'`.execute(open.db);
    // from the transaction's start, at most 3 s would be left
    expect(rows[0].left).toBeGreaterThan(4000);
  }, 30_000);
});
