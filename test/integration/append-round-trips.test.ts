import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import {
  ConcurrencyError,
  EventStore,
  InlineProjectionFailedError,
  inlineProjections,
  type NewEvent,
  openDatabase,
  StreamTenantMismatchError,
} from '../../libs/events';
import type { InlineProjection } from '../../libs/events/projections/projection';
import { barrierPassed, sessionCreated } from '../support/log-events';
import { type CountedDatabase, countedDatabase, type CountingDatabase } from '../support/statement-counter';

const input = (i: number): NewEvent => ({
  type: 'player-input.submitted@1',
  data: { executionId: `e${i}-${randomUUID()}`, turnId: `t${i}`, messageId: `m${i}-${randomUUID()}`, text: String(i) },
});

describe('an append on the real PostgreSQL: statements and transactions', () => {
  let database: CountedDatabase;
  let counting: CountingDatabase;
  let open2: Awaited<ReturnType<typeof openDatabase>> | undefined;
  beforeAll(async () => {
    database = await countedDatabase();
    counting = database.counting;
    open2 = await openDatabase({ kind: 'postgres', url: database.url, poolSize: 2 });
  });
  afterAll(async () => {
    await open2?.close();
    await database.drop();
  });
  beforeEach(() => counting.reset());

  it('with no inline projection to apply: one statement (lock, version check and insert), no transaction block', async () => {
    const store = new EventStore(counting.db, { inline: inlineProjections });
    const streamId = randomUUID();
    await store.append({ tenantId: 't', streamId, expectedVersion: 0, events: [sessionCreated(streamId)] });
    counting.reset();
    const result = await store.append({ tenantId: 't', streamId, expectedVersion: 1, events: [barrierPassed('e1')] });
    expect(counting.statements).toHaveLength(1);
    expect(counting.transactions()).toBe(0);
    expect(result.version).toBe(2);
    expect((await store.readStream(streamId)).map((e) => [e.streamVersion, e.type])).toEqual([
      [1, 'session.created@1'],
      [2, 'compaction.barrier-passed@1'],
    ]);
  });

  it('with inline projections whose writes have a SQL form: one statement, their writes in it (data-modifying CTEs), no transaction block', async () => {
    const store = new EventStore(counting.db, { inline: inlineProjections });
    const streamId = randomUUID();
    await store.append({ tenantId: 't', streamId, expectedVersion: 0, events: [sessionCreated(streamId)] });
    counting.reset();
    const event = input(1);
    const { events } = await store.append({ tenantId: 't', streamId, expectedVersion: 1, events: [event] });
    // the append and the executions row (was BEGIN, the append, the executions row, COMMIT)
    expect(counting.statements).toHaveLength(1);
    expect(counting.statements[0]).toMatch(/pg_advisory_xact_lock.*insert into events.*insert into executions/is);
    expect(counting.transactions()).toBe(0);
    const row = await counting.db
      .selectFrom('executions')
      .selectAll()
      .where('execution_id', '=', (event.data as { executionId: string }).executionId)
      .executeTakeFirstOrThrow();
    expect(row).toMatchObject({ status: 'queued', submitted_version: 2, submitted_at: new Date(events[0].recordedAt), tenant_id: 't', session_id: streamId });
  });

  it('with a plugin-data write (the claim with a function’s write; a rewrite, catching up): one statement each, the rows in it (was a transaction of six)', async () => {
    const store = new EventStore(counting.db, { inline: inlineProjections });
    const streamId = randomUUID();
    const event = input(1);
    const { executionId, turnId } = event.data as { executionId: string; turnId: string };
    await store.append({ tenantId: 't', streamId, expectedVersion: 0, events: [sessionCreated(streamId), event] });
    const write = (value: unknown): NewEvent => ({
      type: 'plugin-data.written@1',
      data: { executionId, turnId, attempt: 1, pluginId: 'world-time', namespace: 'clock', key: 'now ⏰', value: value as never },
    });
    counting.reset();
    const first = await store.append({
      tenantId: 't',
      streamId,
      expectedVersion: 2,
      events: [{ type: 'execution.started@1', data: { executionId, turnId, attempt: 1, workerId: 'w' } }, write({ day: 1 })],
    });
    const { appended } = await store.appendCatchingUp({ tenantId: 't', streamId, afterVersion: 4, events: [write({ day: 2 })], rebuild: () => [] });
    expect(counting.statements).toHaveLength(2);
    expect(counting.statements[0]).toMatch(/insert into events.*insert into plugin_data .*insert into plugin_data_namespaces/is);
    expect(counting.transactions()).toBe(0);
    const rows = await counting.db.selectFrom('plugin_data').selectAll().where('session_id', '=', streamId).execute();
    expect(rows).toEqual([
      expect.objectContaining({
        key: 'now ⏰',
        value: { day: 2 },
        created_position: String(first.events[1].globalPosition),
        updated_position: String(appended!.events[0].globalPosition),
      }),
    ]);
    const counted = await counting.db.selectFrom('plugin_data_namespaces').selectAll().where('session_id', '=', streamId).execute();
    expect(counted).toEqual([expect.objectContaining({ namespace: 'clock', row_count: 1 })]);
  });

  it('with writes a statement cannot hold (two writes of one execution’s row; an edit): one transaction, as before', async () => {
    const store = new EventStore(counting.db, { inline: inlineProjections });
    const streamId = randomUUID();
    const event = input(1);
    const { executionId, turnId } = event.data as { executionId: string; turnId: string };
    await store.append({ tenantId: 't', streamId, expectedVersion: 0, events: [sessionCreated(streamId)] });
    counting.reset();
    // the execution's row inserted, then updated: an update cannot see a row another CTE of its statement inserts
    const started: NewEvent = { type: 'execution.started@1', data: { executionId, turnId, attempt: 1, workerId: 'w' } };
    await store.append({ tenantId: 't', streamId, expectedVersion: 1, events: [event, started] });
    expect(counting.statements.map((s) => s.slice(0, 30))).toEqual([
      expect.stringMatching(/^begin/i),
      expect.stringMatching(/^with l as materialized/),
      expect.stringMatching(/^insert into "executions"/),
      expect.stringMatching(/^update "executions"/),
      expect.stringMatching(/^commit/i),
    ]);
    expect(await counting.db.selectFrom('executions').select(['status', 'attempts']).where('execution_id', '=', executionId).executeTakeFirstOrThrow()).toEqual(
      {
        status: 'running',
        attempts: 1,
      },
    );
    counting.reset();
    // an edit has no SQL form
    const edited: NewEvent = { type: 'message.edited@1', data: { messageId: 'm', turnId, text: 'edited', by: 'player' } };
    await store.append({ tenantId: 't', streamId, expectedVersion: 3, events: [edited] });
    expect(counting.transactions()).toBe(1);
  });

  it('a projection’s write that fails in the statement fails the append whole (InlineProjectionFailedError naming it), nothing written', async () => {
    const broken: InlineProjection = {
      name: 'broken',
      handles: ['compaction.barrier-passed@1'],
      tables: ['executions'],
      // no tenant: the not-null constraint of executions refuses it
      sqlFor: (_event, ctx) => ({
        ctes: [{ name: 'w', body: sql`insert into executions (execution_id) select 'x' from ${ctx.row} e` }],
        rows: ['executions:x'],
      }),
      applyBatch: () => Promise.reject(new Error('not applied here')),
    };
    const store = new EventStore(counting.db, { inline: [...inlineProjections, broken] });
    const streamId = randomUUID();
    await store.append({ tenantId: 't', streamId, expectedVersion: 0, events: [sessionCreated(streamId)] });
    counting.reset();
    const failure = await store.append({ tenantId: 't', streamId, expectedVersion: 1, events: [barrierPassed('e1')] }).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(InlineProjectionFailedError);
    expect(failure).toMatchObject({ projection: 'broken', eventType: 'compaction.barrier-passed@1', streamId, tenantId: 't' });
    expect(counting.transactions()).toBe(0);
    const caught = await store
      .appendCatchingUp({ tenantId: 't', streamId, afterVersion: 1, events: [barrierPassed('e2')], rebuild: () => [] })
      .catch((e: unknown) => e);
    expect(caught).toBeInstanceOf(InlineProjectionFailedError);
    expect(await store.streamVersion(streamId)).toBe(1);
  });

  it('a stage’s start with its first model call (one append): one statement, the start’s update in it (the call’s progress mark is left out: the start wrote the same row)', async () => {
    const store = new EventStore(counting.db, { inline: inlineProjections });
    const streamId = randomUUID();
    const event = input(1);
    const { executionId, turnId } = event.data as { executionId: string; turnId: string };
    await store.append({ tenantId: 't', streamId, expectedVersion: 0, events: [sessionCreated(streamId), event] });
    counting.reset();
    const started: NewEvent = { type: 'execution.started@1', data: { executionId, turnId, attempt: 1, workerId: 'w' } };
    const calling: NewEvent = {
      type: 'llm.calling@1',
      data: {
        executionId,
        turnId,
        attempt: 1,
        callId: `${executionId}-c`,
        pluginId: 'narrator',
        runtimeId: 'story',
        provider: 'openai',
        model: 'm',
        body: '{}',
      },
    };
    const { events } = await store.append({ tenantId: 't', streamId, expectedVersion: 2, events: [started, calling] });
    expect(counting.statements).toHaveLength(1);
    expect(counting.statements[0]).toMatch(/update executions set status = 'running', attempts/);
    expect(counting.statements.filter((s) => /update executions set updated_at/.test(s))).toEqual([]);
    const row = await counting.db.selectFrom('executions').selectAll().where('execution_id', '=', executionId).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ status: 'running', attempts: 1, worker_id: 'w', updated_at: new Date(events[1].recordedAt) });
  });

  it('a wrong expected version, or another tenant’s stream, writes nothing in that one statement', async () => {
    const store = new EventStore(counting.db);
    const streamId = randomUUID();
    await store.append({ tenantId: 't', streamId, expectedVersion: 0, events: [sessionCreated(streamId)] });
    await expect(store.append({ tenantId: 't', streamId, expectedVersion: 0, events: [barrierPassed('e1')] })).rejects.toEqual(expect.any(ConcurrencyError));
    await expect(store.append({ tenantId: 't', streamId, expectedVersion: 2, events: [barrierPassed('e1')] })).rejects.toEqual(expect.any(ConcurrencyError));
    await expect(store.append({ tenantId: 'other', streamId, expectedVersion: 1, events: [barrierPassed('e1')] })).rejects.toEqual(
      expect.any(StreamTenantMismatchError),
    );
    expect((await store.readStream(streamId)).map((e) => e.streamVersion)).toEqual([1]);
  });

  it('an input at the head with `earliestPending`: the same one statement says which earlier execution of the session is pending (none: null)', async () => {
    const store = new EventStore(counting.db, { inline: inlineProjections });
    const streamId = randomUUID();
    await store.append({ tenantId: 't', streamId, expectedVersion: 0, events: [sessionCreated(streamId)] });
    counting.reset();
    const first = input(1);
    const alone = await store.appendAtHead({ tenantId: 't', streamId, events: [first], earliestPending: true });
    expect(alone.earliestPending).toBeNull();
    expect(counting.statements).toHaveLength(1);
    const second = await store.appendAtHead({ tenantId: 't', streamId, events: [input(2)], earliestPending: true });
    expect(second.earliestPending).toBe((first.data as { executionId: string }).executionId);
    expect(counting.statements).toHaveLength(2);
    expect(counting.transactions()).toBe(0);
    // without it: nothing read, nothing said
    expect((await store.appendAtHead({ tenantId: 't', streamId, events: [input(3)] })).earliestPending).toBeUndefined();
  });

  it('`earliestPending` racing the end of the execution before: an end committed first is never seen pending (the input is the head), one committed after sees the input', async () => {
    const store = new EventStore(counting.db, { inline: inlineProjections });
    const other = new EventStore(open2!.db, { inline: inlineProjections });
    for (let round = 0; round < 40; round++) {
      const streamId = randomUUID();
      const first = input(1);
      const firstId = (first.data as { executionId: string; turnId: string }).executionId;
      await store.append({ tenantId: 't', streamId, expectedVersion: 0, events: [sessionCreated(streamId), first] });
      const failed: NewEvent = {
        type: 'execution.failed@1',
        data: { executionId: firstId, turnId: 't1', attempt: 0, error: { code: 'X', message: 'x' } },
      };
      const atHead = async () => {
        for (;;) {
          try {
            return await store.appendAtHead({ tenantId: 't', streamId, events: [input(2)], earliestPending: true });
          } catch (error) {
            if (!(error instanceof ConcurrencyError)) throw error;
          }
        }
      };
      // the end as a worker appends it: waits for the lock, catches up on what came
      const end = other.appendCatchingUp({ tenantId: 't', streamId, afterVersion: 2, events: [failed], rebuild: () => [failed] });
      const [appended, ended] = await Promise.all([atHead(), end]);
      const endVersion = ended.appended!.version;
      if (endVersion < appended.version) expect(appended.earliestPending).toBeNull();
      else {
        expect(appended.earliestPending).toBe(firstId);
        expect(ended.missed.map((e) => e.type)).toEqual(['player-input.submitted@1']);
      }
    }
  });

  it('a catching-up append behind the head: the lock and the conditional insert that returns what came first are one statement (BEGIN, it, the append built again, COMMIT)', async () => {
    const store = new EventStore(counting.db, { inline: inlineProjections });
    const streamId = randomUUID();
    await store.append({ tenantId: 't', streamId, expectedVersion: 0, events: [sessionCreated(streamId), barrierPassed('e0')] });
    const missedOf: string[][] = [];
    const catchUp = (afterVersion: number, executionId: string) =>
      store.appendCatchingUp({
        tenantId: 't',
        streamId,
        afterVersion,
        events: [barrierPassed(executionId)],
        rebuild: (missed) => {
          missedOf.push(missed.map((e) => `${e.streamVersion} ${e.type}`));
          return [barrierPassed(`${executionId}-again`)];
        },
      });
    // another writer came first (3): the caller read up to 2
    await new EventStore(open2!.db).append({ tenantId: 't', streamId, expectedVersion: 2, events: [barrierPassed('other')] });
    counting.reset();
    // the first try writes nothing, then BEGIN, the locked statement (nothing written, what came
    // returned), the append built again at the head, COMMIT
    expect((await catchUp(2, 'e1')).appended?.version).toBe(4);
    expect(counting.statements).toEqual([
      expect.stringMatching(/pg_try_advisory_xact_lock.*insert into events/i),
      expect.stringMatching(/^begin/i),
      expect.stringMatching(/^select \* from events_append_locked\(/),
      expect.stringMatching(/^insert into "events"/),
      expect.stringMatching(/^commit/i),
    ]);
    expect(missedOf).toEqual([['3 compaction.barrier-passed@1']]);
    // the stream is contended now: the locked path directly; behind again, 4 statements; at the
    // head, 3 (its one statement writes the events)
    await new EventStore(open2!.db).append({ tenantId: 't', streamId, expectedVersion: 4, events: [barrierPassed('other2')] });
    counting.reset();
    expect((await catchUp(4, 'e2')).appended?.version).toBe(6);
    expect(counting.statements).toHaveLength(4);
    expect(counting.transactions()).toBe(1);
    counting.reset();
    expect((await catchUp(6, 'e3')).appended?.version).toBe(7);
    expect(counting.statements).toHaveLength(3);
    expect(counting.statements.some((s) => /pg_advisory_xact_lock|with at as/.test(s))).toBe(false);
    expect(missedOf).toEqual([['3 compaction.barrier-passed@1'], ['5 compaction.barrier-passed@1']]);
    expect((await store.readStream(streamId)).map((e) => (e.data as { executionId: string }).executionId ?? e.type)).toEqual([
      'session.created@1',
      'e0',
      'other',
      'e1-again',
      'other2',
      'e2-again',
      'e3',
    ]);
    // another tenant's writer, behind or not, writes nothing
    await expect(
      store.appendCatchingUp({ tenantId: 'other', streamId, afterVersion: 7, events: [barrierPassed('x')], rebuild: () => [barrierPassed('x')] }),
    ).rejects.toEqual(expect.any(StreamTenantMismatchError));
    await expect(
      store.appendCatchingUp({ tenantId: 'other', streamId, afterVersion: 5, events: [barrierPassed('x')], rebuild: () => [barrierPassed('x')] }),
    ).rejects.toEqual(expect.any(StreamTenantMismatchError));
    expect(await store.streamVersion(streamId)).toBe(7);
  });

  it('20 concurrent single-statement appends at one version: one wins, the rest get ConcurrencyError', async () => {
    const store = new EventStore(counting.db, { inline: inlineProjections });
    const streamId = randomUUID();
    await store.append({ tenantId: 't', streamId, expectedVersion: 0, events: [sessionCreated(streamId)] });
    const results = await Promise.allSettled(
      Array.from({ length: 20 }, (_, i) =>
        store.append({ tenantId: 't', streamId, expectedVersion: 1, events: [barrierPassed(`e${i}`), barrierPassed(`f${i}`)] }),
      ),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    for (const r of results) if (r.status === 'rejected') expect(r.reason).toBeInstanceOf(ConcurrencyError);
    expect((await store.readStream(streamId)).map((e) => e.streamVersion)).toEqual([1, 2, 3]);
  });

  it('an input appended at the head: no read before it, one statement with the executions row, no transaction; concurrent ones all land in order', async () => {
    const store = new EventStore(counting.db, { inline: inlineProjections });
    const streamId = randomUUID();
    await store.append({ tenantId: 't', streamId, expectedVersion: 0, events: [sessionCreated(streamId)] });
    counting.reset();
    const appended = await store.appendAtHead({ tenantId: 't', streamId, events: [input(1)] });
    expect(appended.version).toBe(2);
    expect(counting.statements).toHaveLength(1);
    expect(counting.transactions()).toBe(0);
    // as the API does: a ConcurrencyError (an append between the statement's snapshot and its lock) is tried again
    const atHead = async (n: number): Promise<number> => {
      for (;;) {
        try {
          return (await store.appendAtHead({ tenantId: 't', streamId, events: [input(n)] })).version;
        } catch (error) {
          if (!(error instanceof ConcurrencyError)) throw error;
        }
      }
    };
    const versions = await Promise.all(Array.from({ length: 20 }, (_, i) => atHead(i + 2)));
    expect([...versions].sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i + 3));
    expect((await store.readStream(streamId)).map((e) => e.streamVersion)).toEqual(Array.from({ length: 22 }, (_, i) => i + 1));
    // each input's row, at its own version
    const rows = await counting.db
      .selectFrom('executions')
      .select(['submitted_version'])
      .where('session_id', '=', streamId)
      .orderBy('submitted_version')
      .execute();
    expect(rows.map((r) => r.submitted_version)).toEqual(Array.from({ length: 21 }, (_, i) => i + 2));
    await expect(store.appendAtHead({ tenantId: 'other', streamId, events: [input(99)] })).rejects.toEqual(expect.any(StreamTenantMismatchError));
    await expect(store.appendAtHead({ tenantId: 't', streamId: randomUUID(), events: [input(99)] })).rejects.toEqual(expect.any(StreamTenantMismatchError));
  });
});
