import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { createAsyncProjector } from '../../libs/engine';
import {
  AsyncProjector,
  EventStore,
  migrateToLatest,
  type NewEvent,
  openDatabase,
  type OpenDatabase,
  type Projection,
  QUARANTINE_STATUS_LIMIT,
  ReadModels,
  REPLAY_OWNER_PREFIX,
} from '../../libs/events';
import { prefixReportsProjection } from '../../libs/reports';

/**
 * Issue 31 item 3, the projector on PGlite with the real async projections: an `llm.calling@1` whose
 * request body is not JSON passes the event schema, trace_events applies it, prefix_reports cannot
 * (SyntaxError). After `quarantineAfter` failed attempts the event is quarantined and the shard goes on.
 */
describe('a poisoned event is quarantined after N attempts (AsyncProjector, PGlite)', () => {
  let open: OpenDatabase;
  let store: EventStore;
  beforeEach(async () => {
    open = await openDatabase({ kind: 'pglite' });
    await migrateToLatest(open.db);
    store = new EventStore(open.db);
  });
  afterEach(() => open.close());

  const warnings: string[] = [];
  const logger = { log: () => undefined, warn: (line: string) => warnings.push(line), error: () => undefined };

  /** One turn of a session: a call and its answer; `body` replaces the request body (a poisoned one). */
  async function turn(session: string, options: { body?: string } = {}): Promise<{ callId: string; position: number }> {
    const version = await store.streamVersion(session);
    const events: NewEvent[] = version === 0 ? [{ type: 'session.created@1', data: { sessionId: session, worldId: null, locale: 'en' } }] : [];
    const callId = randomUUID();
    const base = { executionId: `e-${callId}`, turnId: randomUUID(), callId, pluginId: 'p', runtimeId: 'narrator' };
    const body = options.body ?? JSON.stringify({ model: 'm', messages: [{ role: 'user', content: `move ${version} 😀` }] });
    events.push(
      { type: 'llm.calling@1', data: { ...base, attempt: 1, provider: 'openai-chat', model: 'm', body } },
      { type: 'llm.responded@1', data: { ...base, finishReason: 'stop', usage: { inputTokens: 10, outputTokens: 5, cachedInputTokens: 3 } } },
    );
    const result = await store.append({ tenantId: `tenant-${session}`, streamId: session, expectedVersion: version, events });
    return { callId, position: result.lastPosition - 1 };
  }
  const reportCalls = async (session: string) =>
    (await open.db.selectFrom('prefix_reports').select('call_id').where('session_id', '=', session).orderBy('turn').execute()).map((r) => r.call_id);
  const records = () => open.db.selectFrom('projection_quarantine').selectAll().execute();

  it('given a poisoned event, when the shard fails it N times, then it is recorded with its error, skipped, acknowledged, and replay reports it', async () => {
    // given: a session whose second turn's request body is not JSON, a turn after it, and other sessions
    const poisoned = 'poisoned-session';
    const first = await turn(poisoned);
    const bad = await turn(poisoned, { body: 'no-such-json-text' });
    const after = await turn(poisoned);
    for (let s = 0; s < 5; s++) await turn(`other-${s}`);
    const shard = Number((await sql<{ p: number }>`select (hashtext(${poisoned}) & 15)::int as p`.execute(open.db)).rows[0].p);
    const projector = createAsyncProjector(open.db, { owner: 'w1', logger, quarantineAfter: 3, retryDelayMs: 3_600_000 });
    const prefix = async () => (await projector.status()).find((p) => p.name === 'prefix_reports')!;

    // when: the first two attempts fail, the shard is stopped at the event (nothing recorded yet)
    await projector.drain();
    await projector.drain({ retryNow: true });
    expect((await prefix()).shards[shard]).toMatchObject({ state: 'failing', failure: { globalPosition: bad.position, attempts: 2 } });
    expect(await records()).toEqual([]);
    expect(await reportCalls(poisoned)).toEqual([first.callId]);

    // the third attempt: quarantined, and the shard goes on with the next events
    await projector.drain({ retryNow: true });
    const status = await prefix();
    expect(status).toMatchObject({ state: 'running', failing: 0, lag: 0, quarantinedTotal: 1 });
    expect(status.quarantined).toEqual([
      expect.objectContaining({
        projection: 'prefix_reports',
        shard,
        globalPosition: bad.position,
        eventType: 'llm.calling@1',
        tenantId: `tenant-${poisoned}`,
        streamId: poisoned,
        errorCode: 'SyntaxError',
        error: expect.stringMatching(/SyntaxError: .*JSON/),
        attempts: 3,
        acknowledgedAt: null,
        resolvedAt: null,
      }),
    ]);
    expect(await reportCalls(poisoned)).toEqual([first.callId, after.callId]);
    // trace_events applied the event: it has nothing quarantined
    expect((await projector.status()).find((p) => p.name === 'trace_events')).toMatchObject({ state: 'running', quarantined: [], quarantinedTotal: 0 });
    const id = status.quarantined[0].id;
    expect(warnings.filter((w) => w.includes('skipped'))).toEqual([
      expect.stringContaining(
        `projection prefix_reports shard ${shard} skipped the event at global position ${bad.position} (llm.calling@1) of stream ${poisoned}`,
      ),
    ]);

    // tenant-scoped: the session's own tenant sees that its view misses it; the same stream id under another tenant does not
    expect(await projector.quarantine.forStream({ tenantId: `tenant-${poisoned}`, streamId: poisoned, projection: 'prefix_reports' })).toHaveLength(1);
    expect(await projector.quarantine.forStream({ tenantId: 'tenant-other-0', streamId: poisoned, projection: 'prefix_reports' })).toEqual([]);
    expect(await projector.quarantine.forStream({ tenantId: `tenant-${poisoned}`, streamId: poisoned, projection: 'trace_events' })).toEqual([]);

    // acknowledged: no longer open (health), still unresolved (the view still misses it), counted
    expect(await projector.quarantine.acknowledge(id, 'ops')).toMatchObject({ id, acknowledgedBy: 'ops', resolvedAt: null });
    expect(await projector.quarantine.acknowledge('999', 'ops')).toBeNull();
    expect(await projector.quarantine.acknowledge('not-a-number', 'ops')).toBeNull();
    expect(await prefix()).toMatchObject({ quarantined: [], quarantinedTotal: 1 });
    expect(await projector.quarantine.forStream({ tenantId: `tenant-${poisoned}`, streamId: poisoned, projection: 'prefix_reports' })).toHaveLength(1);

    // a replay tries it again (N times at once), quarantines it again (the same record, still acknowledged), goes on, and reports it
    const replaying = createAsyncProjector(open.db, { owner: `${REPLAY_OWNER_PREFIX}1`, logger, quarantineAfter: 3 });
    const result = await replaying.replay({ projection: 'prefix_reports' });
    expect(result.projections).toEqual([
      {
        name: 'prefix_reports',
        read: expect.any(Number),
        resolved: 0,
        quarantined: [expect.objectContaining({ id, globalPosition: bad.position, streamId: poisoned, acknowledgedBy: 'ops', attempts: 3 })],
      },
    ]);
    expect(await reportCalls(poisoned)).toEqual([first.callId, after.callId]);
    expect(await records()).toHaveLength(1);
    expect(await prefix()).toMatchObject({ state: 'running', lag: 0, quarantined: [] });
  }, 60_000);

  it('a quarantined event a replay can apply (the fault was fixed) is resolved: the view is whole again', async () => {
    const session = 'fixed-later';
    const first = await turn(session);
    const bad = await turn(session, { body: 'no-such-json-text' });
    const projector = createAsyncProjector(open.db, { owner: 'w1', logger, quarantineAfter: 1 });
    await projector.drain();
    expect((await records()).map((r) => [Number(r.global_position), r.resolved_at])).toEqual([[bad.position, null]]);
    // a new release whose prefix_reports reads a body that is not JSON as an empty request
    const fixed: Projection = {
      ...prefixReportsProjection,
      applyBatch: (trx, events) =>
        prefixReportsProjection.applyBatch(
          trx,
          events.map((e) =>
            e.type === 'llm.calling@1' && e.data.body === 'no-such-json-text' ? { ...e, data: { ...e.data, body: '{"model":"m","messages":[]}' } } : e,
          ),
        ),
    };
    const result = await new AsyncProjector({ db: open.db, projections: [fixed], owner: `${REPLAY_OWNER_PREFIX}2`, logger }).replay();
    expect(result.projections[0]).toMatchObject({ resolved: 1, quarantined: [] });
    expect(await reportCalls(session)).toEqual([first.callId, bad.callId]);
    expect(await projector.quarantine.forStream({ tenantId: `tenant-${session}`, streamId: session, projection: 'prefix_reports' })).toEqual([]);
  }, 60_000);

  it('the status lists the newest 20 open quarantined events at most, and counts them all (quarantinedOpen)', async () => {
    const poisoned: number[] = [];
    for (let i = 0; i < QUARANTINE_STATUS_LIMIT + 3; i++) poisoned.push((await turn(`many-${i}`, { body: 'no-such-json-text' })).position);
    const projector = createAsyncProjector(open.db, { owner: 'w1', logger, quarantineAfter: 1 });
    const prefix = async () => (await projector.status()).find((p) => p.name === 'prefix_reports')!;
    for (let i = 0; i < 50 && (await prefix()).quarantinedOpen < poisoned.length; i++) await projector.drain({ retryNow: true });
    const status = await prefix();
    expect(status.quarantinedOpen).toBe(QUARANTINE_STATUS_LIMIT + 3);
    expect(status.quarantined).toHaveLength(QUARANTINE_STATUS_LIMIT);
    // the newest records (the highest ids)
    const ids = (await records()).map((r) => Number(r.id)).sort((a, b) => b - a);
    expect(status.quarantined.map((q) => Number(q.id))).toEqual(ids.slice(0, QUARANTINE_STATUS_LIMIT));
    // one acknowledged: counted out
    await projector.quarantine.acknowledge(status.quarantined[0].id, 'ops');
    expect(await prefix()).toMatchObject({ quarantinedOpen: QUARANTINE_STATUS_LIMIT + 2, quarantinedTotal: QUARANTINE_STATUS_LIMIT + 3 });
  }, 60_000);

  it('a transient failure (SQLSTATE 40P01, a deadlock) is retried but never quarantined; the event applies once it passes', async () => {
    const session = 'deadlocked';
    const first = await turn(session);
    const held = await turn(session, { body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'deadlock here' }] }) });
    let deadlocks = true;
    const deadlocking: Projection = {
      ...prefixReportsProjection,
      applyBatch: async (trx, events) => {
        if (deadlocks && events.some((e) => e.type === 'llm.calling@1' && e.data.body.includes('deadlock here')))
          await sql`do $$ begin raise exception 'deadlock detected' using errcode = '40P01'; end $$`.execute(trx);
        return prefixReportsProjection.applyBatch(trx, events);
      },
    };
    const projector = new AsyncProjector({ db: open.db, projections: [deadlocking], owner: 'w1', logger, quarantineAfter: 1, retryDelayMs: 3_600_000 });
    const shard = Number((await sql<{ p: number }>`select (hashtext(${session}) & 15)::int as p`.execute(open.db)).rows[0].p);
    for (let i = 0; i < 4; i++) await projector.drain({ retryNow: true });
    const status = (await projector.status())[0];
    expect(status.shards[shard]).toMatchObject({ state: 'failing', failure: { globalPosition: held.position, errorCode: '40P01', attempts: 4 } });
    expect(status).toMatchObject({ quarantined: [], quarantinedOpen: 0, quarantinedTotal: 0 });
    expect(await records()).toEqual([]);
    // the deadlock passes: the held event applies, nothing was skipped
    deadlocks = false;
    await projector.drain({ retryNow: true });
    expect((await projector.status())[0].shards[shard].state).toBe('running');
    expect(await reportCalls(session)).toEqual([first.callId, held.callId]);
  }, 60_000);

  it('recordedCalls (tools/prompt-prefix, the benches) reads a request body that is not JSON as {} instead of throwing', async () => {
    const session = 'hand-made-body';
    await turn(session);
    await turn(session, { body: 'no-such-json-text' });
    await createAsyncProjector(open.db, { owner: 'w1', logger, quarantineAfter: 1 }).drain();
    const calls = await new ReadModels(open.db).recordedCalls(session);
    expect(calls.map((c) => c.body)).toEqual([{ model: 'm', messages: [{ role: 'user', content: 'move 0 😀' }] }, {}]);
  });
});
