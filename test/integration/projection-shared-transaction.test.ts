import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { AsyncProjector, EventStore, type NewEvent, type Projection } from '../../libs/events';
import { ASYNC_PROJECTIONS } from '../../libs/engine/startup/projections';
import { type CountedDatabase, countedDatabase, type CountingDatabase } from '../support/statement-counter';

/**
 * Issue 33: the async projector's pass on the real PostgreSQL. The engine's projections (trace_events,
 * prefix_reports, usage) whose rows of a shard stand at the same cursor apply a batch in ONE
 * transaction and move their cursors in ONE statement (before: a transaction and a cursor update per
 * projection). The batches of several shards share that transaction, each projection one statement
 * for all of them, and one cursor update (before: all that per shard). A projection that throws is
 * rolled back with the others and each shard, then each projection, is applied alone: the others'
 * cursors move, it stops at the event with its failure recorded, as before.
 */
describe('the async projector on the real PostgreSQL: statements per pass', () => {
  let database: CountedDatabase;
  let counting: CountingDatabase;
  beforeAll(async () => {
    database = await countedDatabase();
    counting = database.counting;
  });
  afterAll(() => database.drop());
  /** Projectors to stop after each test, a failed one's too (else its shards stay taken for the next test). */
  const running: AsyncProjector[] = [];
  afterEach(() => Promise.all(running.splice(0).map((p) => p.stop())));

  let calls = 0;
  const llmCalling = (callId: string): NewEvent => ({
    type: 'llm.calling@1',
    data: {
      executionId: 'e',
      turnId: 't',
      attempt: 1,
      callId,
      pluginId: 'p',
      runtimeId: 'r',
      provider: 'openai-chat',
      model: 'm',
      body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hello' }] }),
    },
  });
  /** A new session (its own shard) with `count` llm.calling events. */
  async function session(store: EventStore, count: number): Promise<string> {
    const id = randomUUID();
    const events: NewEvent[] = [{ type: 'session.created@1', data: { sessionId: id, worldId: null, locale: 'en' } }];
    for (let i = 0; i < count; i++) events.push(llmCalling(`${id}-c${++calls}`));
    await store.append({ tenantId: `tenant-${id}`, streamId: id, expectedVersion: 0, events });
    return id;
  }
  const commits = () => counting.statements.filter((s) => /^commit\b/i.test(s)).length;
  const cursorUpdates = () => counting.statements.filter((s) => /^update "projection_shards" set "transaction_id"/.test(s)).length;
  /**
   * Passes until one applies something (an event is not applied while a transaction older than it
   * runs anywhere on the server, other suites' included); the statements counted are that pass's.
   */
  async function firstWorkingPass(projector: AsyncProjector): Promise<number> {
    for (let i = 0; i < 200; i++) {
      counting.reset();
      const applied = await projector.runOnce();
      if (applied > 0) return applied;
      await new Promise((r) => setTimeout(r, 25));
    }
    throw new Error('no pass applied anything in 5 s');
  }
  const quiet = { log: () => undefined, warn: () => undefined };

  it('three projections at the same cursor: one transaction and one cursor update for the shard', async () => {
    const store = new EventStore(counting.db);
    const projector = new AsyncProjector({ db: counting.db, projections: ASYNC_PROJECTIONS, owner: 'w-shared', logger: quiet });
    await projector.drain(); // takes the shards
    const first = calls;
    const id = await session(store, 3);
    expect(await firstWorkingPass(projector)).toBe(9); // 3 events × 3 projections
    const statements = counting.statements.length;
    // before: BEGIN, the projection's rows, the cursor, COMMIT for each projection (3 transactions, 3 cursor updates)
    expect({ transactions: counting.transactions(), commits: commits(), cursorUpdates: cursorUpdates() }).toEqual({
      transactions: 1,
      commits: 1,
      cursorUpdates: 1,
    });
    // the read of the rows, the read of the batch, BEGIN, the projections' statements, the cursors, COMMIT
    expect(counting.statements[0]).toMatch(/from "projection_shards"/);
    expect(counting.statements[1]).toMatch(/from unnest\(.*cross join lateral \(\s*select \* from events/s);
    expect(counting.statements[2]).toMatch(/^begin/i);
    expect(counting.statements[statements - 2]).toMatch(/^update "projection_shards" set "transaction_id"/);
    expect(counting.statements[statements - 1]).toMatch(/^commit/i);
    // the projector's own statements (not the projections' rows): 5, before 2 + 3 × 3 = 11
    expect(counting.statements.filter((s) => !/"?(trace_events|prefix_reports|usage_calls|usage_daily)"?/.test(s))).toHaveLength(5);
    // trace_events: the batch's three rows in one insert (before: one a row)
    expect(counting.statements.filter((s) => /^insert into "trace_events"/.test(s))).toHaveLength(1);
    // every projection's cursor is at the head
    expect((await projector.status()).map((p) => [p.name, p.lag])).toEqual(ASYNC_PROJECTIONS.map((p) => [p.name, 0]));
    expect(await counting.db.selectFrom('trace_events').select('call_id').where('session_id', '=', id).orderBy('global_position').execute()).toEqual(
      [1, 2, 3].map((k) => ({ call_id: `${id}-c${first + k}` })),
    );
    await projector.stop();
  });

  /** New sessions until two sit in different log partitions (each a shard of its own). */
  async function twoShards(store: EventStore, count: number): Promise<{ ids: string[]; shards: number[] }> {
    const partition = async (id: string) =>
      Number((await counting.db.selectFrom('events').select('log_partition').where('stream_id', '=', id).limit(1).executeTakeFirstOrThrow()).log_partition);
    const first = await session(store, count);
    for (;;) {
      const second = await session(store, count);
      const shards = [await partition(first), await partition(second)];
      if (shards[0] !== shards[1]) return { ids: [first, second], shards };
    }
  }
  /**
   * Until the sessions' `count` events are ones a reader may apply now (no transaction older than
   * them runs anywhere on the server), so the next pass finds both shards' batches.
   */
  async function untilVisible(ids: readonly string[], count: number): Promise<void> {
    for (let i = 0; i < 200; i++) {
      const { rows } = await sql<{ n: string }>`select count(*) as n from events
        where stream_id = any(${ids}::text[]) and transaction_id < pg_snapshot_xmin(pg_current_snapshot())`.execute(counting.db);
      if (Number(rows[0].n) >= count) return;
      await new Promise((r) => setTimeout(r, 25));
    }
    throw new Error('the appends were not visible in 5 s');
  }

  it('batches of several shards: one transaction, each projection one statement, one cursor update for them all', async () => {
    const store = new EventStore(counting.db);
    const projector = new AsyncProjector({ db: counting.db, projections: ASYNC_PROJECTIONS, owner: 'w-shards', logger: quiet });
    running.push(projector);
    await projector.drain();
    const { ids } = await twoShards(store, 2);
    await firstWorkingPass(projector);
    await projector.drain(); // a pass may have run before the second session was visible
    expect((await projector.status()).map((p) => [p.name, p.lag])).toEqual(ASYNC_PROJECTIONS.map((p) => [p.name, 0]));
    // the same two sessions' events again, now appended before one pass
    for (const id of ids)
      await store.append({
        tenantId: `tenant-${id}`,
        streamId: id,
        expectedVersion: 3,
        events: [llmCalling(`${id}-c${++calls}`), llmCalling(`${id}-c${++calls}`)],
      });
    await untilVisible(ids, 2 * 5);
    expect(await firstWorkingPass(projector)).toBe(2 * 2 * 3);
    // before: per shard a BEGIN, the projections' statements, a cursor update and a COMMIT
    expect({ transactions: counting.transactions(), commits: commits(), cursorUpdates: cursorUpdates() }).toEqual({
      transactions: 1,
      commits: 1,
      cursorUpdates: 1,
    });
    expect(counting.statements.filter((s) => /^insert into "trace_events"/.test(s))).toHaveLength(1);
    // one read of both shards' batches (before: one per shard)
    const reads = counting.statements.filter((s) => /from "events" where "log_partition"|cross join lateral \(\s*select \* from events/.test(s));
    expect(reads).toEqual([expect.stringMatching(/from unnest\(/)]);
    expect((await projector.status()).map((p) => [p.name, p.lag])).toEqual(ASYNC_PROJECTIONS.map((p) => [p.name, 0]));
    for (const id of ids) expect(await counting.db.selectFrom('trace_events').select('call_id').where('session_id', '=', id).execute()).toHaveLength(4);
    await projector.stop();
  });

  it('a projection that throws on one shard of the shared transaction: every other shard and projection goes on, it stops there alone', async () => {
    const store = new EventStore(counting.db);
    const fault = { callId: '' };
    const [trace, ...rest] = ASYNC_PROJECTIONS;
    const flaky: Projection = {
      ...trace,
      name: 'flaky_shards',
      async applyBatch(trx, events) {
        if (events.some((e) => e.type === 'llm.calling@1' && e.data.callId === fault.callId)) throw new Error(`cannot apply ${fault.callId}`);
        await trace.applyBatch(trx, events);
      },
    };
    const warnings: string[] = [];
    const projector = new AsyncProjector({
      db: counting.db,
      projections: [flaky, ...rest],
      owner: 'w-shards-fault',
      logger: { log: () => undefined, warn: (l: string) => warnings.push(l) },
      retryDelayMs: 3_600_000,
    });
    running.push(projector);
    await projector.drain();
    const { ids, shards } = await twoShards(store, 0);
    await projector.drain();
    fault.callId = `${ids[0]}-bad`;
    await store.append({ tenantId: `tenant-${ids[0]}`, streamId: ids[0], expectedVersion: 1, events: [llmCalling(`${ids[0]}-ok`), llmCalling(fault.callId)] });
    await store.append({
      tenantId: `tenant-${ids[1]}`,
      streamId: ids[1],
      expectedVersion: 1,
      events: [llmCalling(`${ids[1]}-ok`), llmCalling(`${ids[1]}-ok2`)],
    });
    await untilVisible(ids, 2 * 3);
    // the others apply both shards' 4 events; flaky_shards the other shard's 2 and the event before the fault
    expect(await firstWorkingPass(projector)).toBe(4 * 2 + 2 + 1);
    const byName = new Map((await projector.status()).map((p) => [p.name, p]));
    expect(byName.get('flaky_shards')).toMatchObject({ state: 'failing', failing: 1, lag: 1 });
    expect(byName.get('flaky_shards')!.shards.find((s) => s.failure !== null)).toMatchObject({ shard: shards[0], failure: { attempts: 1 } });
    for (const p of rest) expect(byName.get(p.name)).toMatchObject({ state: 'running', lag: 0 });
    expect(warnings.filter((w) => w.includes('flaky_shards'))).toHaveLength(1);
    await projector.stop();
  });

  it('one projection that throws: the others commit, it stops at the event with its failure recorded, and rejoins them once it applies', async () => {
    const store = new EventStore(counting.db);
    const fault = { on: true, callId: '' };
    const [trace, ...rest] = ASYNC_PROJECTIONS;
    const flaky: Projection = {
      ...trace,
      name: 'flaky_trace',
      async applyBatch(trx, events) {
        if (fault.on && events.some((e) => e.type === 'llm.calling@1' && e.data.callId === fault.callId)) throw new Error(`cannot apply ${fault.callId}`);
        await trace.applyBatch(trx, events);
      },
    };
    // flaky_trace writes trace_events as trace_events would: only one of the two runs here
    const projections = [flaky, ...rest];
    const warnings: string[] = [];
    const logs: string[] = [];
    const logger = { log: (l: string) => logs.push(l), warn: (l: string) => warnings.push(l) };
    const projector = new AsyncProjector({ db: counting.db, projections, owner: 'w-fault', logger, retryDelayMs: 3_600_000 });
    await projector.drain();
    calls = 100;
    fault.callId = `-c${calls + 2}`; // the second event of the session
    const id = await session(store, 3);
    fault.callId = `${id}${fault.callId}`;
    counting.reset();
    // the shared transaction rolls back; each alone: the others apply the 3 events, flaky_trace the one before the fault
    expect(await firstWorkingPass(projector)).toBe(3 + 3 + 1);
    const byName = new Map((await projector.status()).map((p) => [p.name, p]));
    expect(byName.get('flaky_trace')).toMatchObject({ state: 'failing', failing: 1, lag: 2 }); // the faulty event and the one after it
    expect(byName.get('flaky_trace')!.shards.find((s) => s.failure !== null)!.failure).toMatchObject({ attempts: 1, eventType: 'llm.calling@1' });
    for (const p of rest) expect(byName.get(p.name)).toMatchObject({ state: 'running', lag: 0 });
    expect(warnings.filter((w) => w.includes('flaky_trace'))).toHaveLength(1);

    // the fault is gone: flaky_trace catches up alone, then the three share the next batch again
    fault.on = false;
    expect(await projector.runOnce({ retryNow: true })).toBe(2);
    expect(logs.filter((l) => l.includes('flaky_trace') && l.includes('runs again'))).toHaveLength(1);
    const { log_partition: shard } = await counting.db
      .selectFrom('events')
      .select('log_partition')
      .where('stream_id', '=', id)
      .limit(1)
      .executeTakeFirstOrThrow();
    const rows = await counting.db
      .selectFrom('projection_shards')
      .select(['global_position', 'failing_since'])
      .where('shard', '=', shard)
      .where('projection', 'in', projector.names)
      .execute();
    expect(rows).toHaveLength(3);
    expect(new Set(rows.map((r) => String(r.global_position))).size).toBe(1);
    expect(rows.every((r) => r.failing_since === null)).toBe(true);
    await store.append({ tenantId: `tenant-${id}`, streamId: id, expectedVersion: 4, events: [llmCalling(`${id}-c${++calls}`)] });
    expect(await firstWorkingPass(projector)).toBe(3);
    expect({ transactions: counting.transactions(), cursorUpdates: cursorUpdates() }).toEqual({ transactions: 1, cursorUpdates: 1 });
    await projector.stop();
  });
});
