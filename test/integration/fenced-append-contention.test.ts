import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { EventStore, inlineProjections, type NewEvent, openDatabase, type OpenDatabase, StreamContention, StreamTenantMismatchError } from '../../libs/events';
import { lockStream } from '../../libs/events/stream-lock';
import { FencedOutError, SessionJournal } from '../../libs/engine';
import { ExecutionRun } from '../../libs/engine/execution/fenced-append';
import type { ExecutionJournal } from '../../libs/engine/journal/journal';
import { type CountedDatabase, countedDatabase, type CountingDatabase } from '../support/statement-counter';

/**
 * Sibling runtimes of one turn append to the same session from different processes (each its own
 * journal, its own pool). Issue 33 measured them losing to each other: every append that came
 * second was rolled back, caught up and tried again. They now wait for the session's lock and
 * catch up under it: no append fails, and what each writes is what it wrote before. An append
 * that nothing came before is tried first without the lock statement (and, with no inline
 * projection to apply, without a transaction).
 */
describe('fenced appends of sibling runtimes on the real PostgreSQL', () => {
  let database: CountedDatabase;
  let open: OpenDatabase;
  let counting: CountingDatabase[];
  beforeAll(async () => {
    database = await countedDatabase({ counters: 2 });
    open = await openDatabase({ kind: 'postgres', url: database.url, poolSize: 4 });
    counting = database.all;
  });
  afterAll(async () => {
    await open.close();
    await database.drop();
  });

  const TURN = { executionId: 'e1', turnId: 't1' };

  /** A session with one claimed execution (attempt 1). */
  async function claimedSession(): Promise<string> {
    const sessionId = randomUUID();
    await new EventStore(open.db).append({
      tenantId: 'tenant',
      streamId: sessionId,
      expectedVersion: 0,
      events: [
        { type: 'session.created@1', data: { sessionId, worldId: null, locale: 'en' } },
        { type: 'player-input.submitted@1', data: { ...TURN, messageId: 'm1', text: 'go' } },
        { type: 'execution.started@1', data: { ...TURN, attempt: 1, workerId: 'w' } },
      ],
    });
    return sessionId;
  }

  /** One runtime's run of attempt 1 in its own "process": its own store (the engine's inline projections with `inline`), pool and journal. */
  async function runtimeRun(sessionId: string, db: CountingDatabase, attempt = 1, options: { inline?: boolean } = {}): Promise<ExecutionRun> {
    const store = new EventStore(db.db, options.inline ? { inline: inlineProjections } : {});
    return new ExecutionRun(store, new SessionJournal(await store.readStream(sessionId)), { tenantId: 'tenant', sessionId, ...TURN }, attempt);
  }

  /** The runtime's reply for a step, once (a step already recorded appends nothing, as the agent loop does). */
  const reply =
    (runtimeId: string, step: number) =>
    (execution: ExecutionJournal): NewEvent[] =>
      execution.agentLoops.get(`p/${runtimeId}`)?.replies.has(step)
        ? []
        : [
            {
              type: 'llm.responded@1',
              data: {
                ...TURN,
                callId: `${runtimeId}-${step}`,
                pluginId: 'p',
                runtimeId,
                finishReason: 'stop',
                usage: { inputTokens: 1, outputTokens: 1, cachedInputTokens: 0 },
                step,
                reply: JSON.stringify({ text: `${runtimeId} ${step}` }),
              },
            },
          ];

  const STEPS = 6;
  const countOf = (db: CountingDatabase, start: string) => db.statements.filter((s) => s.toLowerCase().startsWith(start)).length;
  /** The locked path's one statement: takes the stream's lock, then the conditional insert that returns what came first (migration 0028). */
  const LOCKED = /^select \* from events_append_locked\(/;
  /** The first try: lock if free, version check and insert in one statement. */
  const FIRST_TRY = /pg_try_advisory_xact_lock.*insert into events/i;
  const KINDS: [string, RegExp][] = [
    ['begin', /^begin/i],
    ['commit', /^commit/i],
    ['rollback', /^rollback/i],
    ['try', FIRST_TRY],
    ['locked', LOCKED],
    ['insert', /^insert into "events"/],
  ];
  /** The statements sent, by kind, in order (any other: its start). */
  const kinds = (db: CountingDatabase) => db.statements.map((s) => KINDS.find(([, re]) => re.test(s))?.[0] ?? s.slice(0, 40));

  /** The runtime's model call for a step (the executions view applies it inline). */
  const calling =
    (runtimeId: string, step: number) =>
    (execution: ExecutionJournal): NewEvent[] => [
      {
        type: 'llm.calling@1',
        data: {
          ...TURN,
          attempt: execution.latestAttempt,
          callId: `${runtimeId}-${step}`,
          pluginId: 'p',
          runtimeId,
          provider: 'x',
          model: 'm',
          step,
          body: '{}',
        },
      },
    ];

  /** Until a connection of the test database waits for a lock of this kind (`advisory`: the stream's; `transactionid`: a row another transaction wrote). */
  async function waitForWaiter(kind: 'advisory' | 'transactionid'): Promise<void> {
    for (let tries = 0; tries < 500; tries++) {
      const { rows } = await sql<{ n: number }>`
        select count(*)::int as n from pg_stat_activity
        where datname = current_database() and wait_event_type = 'Lock' and wait_event = ${kind}`.execute(open.db);
      if (rows[0].n > 0) return;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    throw new Error(`no connection waited for a lock (${kind})`);
  }

  async function respondedOf(sessionId: string) {
    const events = await new EventStore(open.db).readStream(sessionId);
    return events.flatMap((e) => (e.type === 'llm.responded@1' ? [`${e.data.runtimeId} ${e.data.step}`] : []));
  }

  it('two runtimes taking turns: every append lands in one transaction at most (no ROLLBACK, no second try), each step once', async () => {
    const sessionId = await claimedSession();
    const [a, b] = [await runtimeRun(sessionId, counting[0]), await runtimeRun(sessionId, counting[1])];
    for (const c of counting) c.reset();
    // each append comes after the other runtime's: its journal is always one event behind
    for (let step = 1; step <= STEPS; step++) {
      await a.append(reply('a', step));
      await b.append(reply('b', step));
    }
    // a's first append is at the head: its one statement writes it. Every later one is behind: the
    // first behind tries first and writes nothing; the stream then counts as contended, so the
    // others go to the catch-up's transaction directly: BEGIN, one statement that takes the lock and
    // returns what came first (the lock and the conditional insert: one round trip), the insert built
    // again from it, COMMIT (no ROLLBACK, no second try, no lock statement of its own)
    const caughtUp = ['begin', 'locked', 'insert', 'commit'];
    expect(kinds(counting[0])).toEqual(['try', 'try', ...caughtUp, ...Array.from({ length: STEPS - 2 }, () => caughtUp).flat()]);
    expect(kinds(counting[1])).toEqual(['try', ...caughtUp, ...Array.from({ length: STEPS - 1 }, () => caughtUp).flat()]);
    expect(counting[0].statements).toHaveLength(2 + 4 * (STEPS - 1));
    expect(counting[1].statements).toHaveLength(1 + 4 * STEPS);
    expect(await respondedOf(sessionId)).toEqual(Array.from({ length: STEPS }, (_, i) => [`a ${i + 1}`, `b ${i + 1}`]).flat());
    // each journal is the stream: it caught up with the other's appends
    expect(a.journal.version).toBe(3 + 2 * STEPS - 1);
    expect(b.journal.version).toBe(3 + 2 * STEPS);
  });

  it('two runtimes appending at once: no append fails or repeats, whatever the interleaving', async () => {
    const sessionId = await claimedSession();
    const runs = [await runtimeRun(sessionId, counting[0]), await runtimeRun(sessionId, counting[1])];
    for (const c of counting) c.reset();
    await Promise.all(
      runs.map(async (run, i) => {
        for (let step = 1; step <= STEPS; step++) await run.append(reply(i === 0 ? 'a' : 'b', step));
      }),
    );
    for (const c of counting) {
      expect(countOf(c, 'rollback')).toBe(0);
      // a transaction only for an append that another came before
      expect(countOf(c, 'begin')).toBeLessThanOrEqual(STEPS);
    }
    const responded = await respondedOf(sessionId);
    expect(responded.filter((r) => r.startsWith('a '))).toEqual(Array.from({ length: STEPS }, (_, i) => `a ${i + 1}`));
    expect(responded.filter((r) => r.startsWith('b '))).toEqual(Array.from({ length: STEPS }, (_, i) => `b ${i + 1}`));
  });

  it('two runtimes appending at once with the inline projections: no append fails or repeats, whatever the interleaving', async () => {
    const sessionId = await claimedSession();
    const runs = [await runtimeRun(sessionId, counting[0], 1, { inline: true }), await runtimeRun(sessionId, counting[1], 1, { inline: true })];
    await Promise.all(
      runs.map(async (run, i) => {
        const runtimeId = i === 0 ? 'a' : 'b';
        // a model call (the executions view applies it inline) and its reply (none applies it)
        for (let step = 1; step <= STEPS; step++) {
          await run.append(calling(runtimeId, step));
          await run.append(reply(runtimeId, step));
        }
      }),
    );
    const responded = await respondedOf(sessionId);
    expect(responded.filter((r) => r.startsWith('a '))).toEqual(Array.from({ length: STEPS }, (_, i) => `a ${i + 1}`));
    expect(responded.filter((r) => r.startsWith('b '))).toEqual(Array.from({ length: STEPS }, (_, i) => `b ${i + 1}`));
    const stream = await new EventStore(open.db).readStream(sessionId);
    expect(stream.map((e) => e.streamVersion)).toEqual(Array.from({ length: 3 + 4 * STEPS }, (_, i) => i + 1));
    for (const run of runs) expect(run.journal.version).toBeLessThanOrEqual(stream.length);
  });

  it('an append that nothing came before: one statement, with an inline projection to apply too (its write a CTE of that statement; no lock statement, no transaction)', async () => {
    const sessionId = await claimedSession();
    const run = await runtimeRun(sessionId, counting[0], 1, { inline: true });
    counting[0].reset();
    // no inline projection handles a reply: lock, version check and insert in one statement, no transaction
    expect(await run.append(reply('a', 1))).toBe(4);
    expect(counting[0].statements).toEqual([expect.stringMatching(/pg_try_advisory_xact_lock.*insert into events/i)]);
    counting[0].reset();
    // the executions view applies a model call, in the append's statement (was BEGIN, it, the update, COMMIT)
    expect(await run.append(calling('a', 2))).toBe(5);
    expect(counting[0].statements).toEqual([expect.stringMatching(/pg_try_advisory_xact_lock.*insert into events.*update executions set updated_at/i)]);
    expect((await new EventStore(open.db).readStream(sessionId, 3)).map((e) => [e.streamVersion, e.type])).toEqual([
      [4, 'llm.responded@1'],
      [5, 'llm.calling@1'],
    ]);
    expect(run.journal.version).toBe(5);
  });

  it('while another append holds the lock: the first try (one statement) neither waits nor writes; a transaction waits for the lock and catches up (no ROLLBACK)', async () => {
    const sessionId = await claimedSession();
    const run = await runtimeRun(sessionId, counting[0], 1, { inline: true });
    counting[0].reset();
    let pending: Promise<number> | undefined;
    await open.db.transaction().execute(async (trx) => {
      await lockStream(trx, sessionId);
      pending = run.append(calling('a', 1));
      await waitForWaiter('advisory');
      // another runtime's reply comes first, made under the lock (the same transaction holds it)
      await new EventStore(trx).append({ tenantId: 'tenant', streamId: sessionId, expectedVersion: 3, events: reply('b', 1)(run.execution) });
    });
    expect(await pending).toBe(5);
    // the locked path in a transaction of its own: one statement waits for the lock and, in a
    // snapshot taken after it, finds the reply that committed meanwhile (no unique violation)
    expect(counting[0].statements).toEqual([
      expect.stringMatching(FIRST_TRY),
      expect.stringMatching(/^begin/i),
      expect.stringMatching(LOCKED),
      expect.stringMatching(/^insert into "events"/),
      expect.stringMatching(/^update "executions"/),
      expect.stringMatching(/^commit/i),
    ]);
    expect((await new EventStore(open.db).readStream(sessionId, 3)).map((e) => [e.streamVersion, e.type])).toEqual([
      [4, 'llm.responded@1'],
      [5, 'llm.calling@1'],
    ]);
    // the run's journal holds what came first
    expect(run.journal.version).toBe(5);
    expect(run.execution.agentLoops.get('p/b')?.replies.has(1)).toBe(true);
  });

  it.each([
    ['with an inline projection to apply (its one statement, the write in it, failed)', true],
    ['with none (its one statement failed)', false],
  ])('a first try turned away by the unique index (an append its snapshot did not hold), %s: then the locked catch-up', async (_, inline) => {
    const sessionId = await claimedSession();
    const run = await runtimeRun(sessionId, counting[0], 1, { inline: true });
    counting[0].reset();
    let pending: Promise<number> | undefined;
    await open.db.transaction().execute(async (trx) => {
      // version 4 written and not committed yet: the first try does not see it, takes the free
      // lock and finds the stream at 3; its insert waits on the unique index, then fails there
      const [first] = reply('b', 1)(run.execution);
      await trx
        .insertInto('events')
        .values({ tenant_id: 'tenant', stream_id: sessionId, stream_version: 4, type: first.type, data: JSON.stringify(first.data), metadata: '{}' })
        .execute();
      pending = run.append(inline ? calling('a', 1) : reply('a', 1));
      await waitForWaiter('transactionid');
    });
    expect(await pending).toBe(5);
    const locked = [
      expect.stringMatching(/^begin/i),
      expect.stringMatching(LOCKED),
      expect.stringMatching(/^insert into "events"/),
      ...(inline ? [expect.stringMatching(/^update "executions"/)] : []),
      expect.stringMatching(/^commit/i),
    ];
    const first = expect.stringMatching(/pg_try_advisory_xact_lock.*insert into events/i);
    expect(counting[0].statements).toEqual([first, ...locked]);
    expect((await new EventStore(open.db).readStream(sessionId, 3)).map((e) => [e.streamVersion, e.type])).toEqual([
      [4, 'llm.responded@1'],
      [5, inline ? 'llm.calling@1' : 'llm.responded@1'],
    ]);
    expect(run.journal.version).toBe(5);
    expect(run.execution.agentLoops.get('p/b')?.replies.has(1)).toBe(true);
  });

  it('a stream others appended to first lately: the next appends take the locked path directly (no wasted first try); once it is quiet, the first try again', async () => {
    const sessionId = await claimedSession();
    let now = 0;
    const store = new EventStore(counting[0].db, { contention: new StreamContention(1_000, 16, () => now) });
    const run = new ExecutionRun(store, new SessionJournal(await store.readStream(sessionId)), { tenantId: 'tenant', sessionId, ...TURN }, 1);
    await (await runtimeRun(sessionId, counting[1])).append(reply('b', 1));
    counting[0].reset();
    // behind: the first try, then begin, the lock with the conditional insert, the insert built again, commit
    expect(await run.append(reply('a', 1))).toBe(5);
    expect(kinds(counting[0])).toEqual(['try', 'begin', 'locked', 'insert', 'commit']);
    counting[0].reset();
    // nothing came since, but the stream counts as contended: the locked path at once, its one
    // statement writes the reply
    expect(await run.append(reply('a', 2))).toBe(6);
    expect(counting[0].statements).toEqual([expect.stringMatching(/^begin/i), expect.stringMatching(LOCKED), expect.stringMatching(/^commit/i)]);
    // quiet for the memory's length: tried first again
    now += 1_000;
    counting[0].reset();
    expect(await run.append(reply('a', 3))).toBe(7);
    expect(counting[0].statements).toEqual([expect.stringMatching(FIRST_TRY)]);
    expect(await respondedOf(sessionId)).toEqual(['b 1', 'a 1', 'a 2', 'a 3']);
  });

  it('a contended append while another transaction holds the lock: its one locked statement waits, then sees what that transaction committed (no unique violation, no ROLLBACK)', async () => {
    const sessionId = await claimedSession();
    // the stream counts as contended: the locked path directly, no first try
    const contention = new StreamContention(60_000, 16);
    contention.record(sessionId);
    const store = new EventStore(counting[0].db, { contention });
    const run = new ExecutionRun(store, new SessionJournal(await store.readStream(sessionId)), { tenantId: 'tenant', sessionId, ...TURN }, 1);
    counting[0].reset();
    let pending: Promise<number> | undefined;
    await open.db.transaction().execute(async (trx) => {
      await lockStream(trx, sessionId);
      pending = run.append(reply('a', 1));
      await waitForWaiter('advisory');
      // the statement waiting for the lock started before this reply was written: its snapshot does
      // not hold it, the insert the function runs after the lock does
      await new EventStore(trx).append({ tenantId: 'tenant', streamId: sessionId, expectedVersion: 3, events: reply('b', 1)(run.execution) });
    });
    expect(await pending).toBe(5);
    expect(kinds(counting[0])).toEqual(['begin', 'locked', 'insert', 'commit']);
    expect(await respondedOf(sessionId)).toEqual(['b 1', 'a 1']);
    expect(run.execution.agentLoops.get('p/b')?.replies.has(1)).toBe(true);
  });

  it('a run of the same runtime and attempt elsewhere appends nothing twice; a newer attempt fences both out', async () => {
    const sessionId = await claimedSession();
    const [first, twin] = [await runtimeRun(sessionId, counting[0]), await runtimeRun(sessionId, counting[1])];
    await first.append(reply('a', 1));
    // the twin's journal has not seen it: under the lock it catches up and builds nothing
    expect(await twin.append(reply('a', 1))).toBe(4);
    expect(await respondedOf(sessionId)).toEqual(['a 1']);
    // attempt 2 is claimed: attempt 1's appends never land, caught up or not
    await new EventStore(open.db).append({
      tenantId: 'tenant',
      streamId: sessionId,
      expectedVersion: 4,
      events: [{ type: 'execution.started@1', data: { ...TURN, attempt: 2, workerId: 'w2' } }],
    });
    await expect(first.append(reply('a', 2))).rejects.toBeInstanceOf(FencedOutError);
    await expect(twin.append(reply('b', 1))).rejects.toBeInstanceOf(FencedOutError);
    expect(await respondedOf(sessionId)).toEqual(['a 1']);
  });

  it("another tenant's writer never appends to the session, behind or not", async () => {
    const sessionId = await claimedSession();
    const store = new EventStore(counting[0].db);
    const events = await store.readStream(sessionId);
    const built = () => reply('a', 1)(new SessionJournal(events).get('e1')!);
    const request = { tenantId: 'other', streamId: sessionId, events: built(), rebuild: built };
    await expect(store.appendCatchingUp({ ...request, afterVersion: 3 })).rejects.toBeInstanceOf(StreamTenantMismatchError);
    await expect(store.appendCatchingUp({ ...request, afterVersion: 2 })).rejects.toBeInstanceOf(StreamTenantMismatchError);
    expect(await respondedOf(sessionId)).toEqual([]);
  });
});
