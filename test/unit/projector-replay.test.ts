import { randomUUID } from 'node:crypto';
import { ASYNC_PROJECTIONS, createAsyncProjector } from '../../libs/engine';
import { AsyncProjector, EventStore, migrateToLatest, type NewEvent, openDatabase, type OpenDatabase, REPLAY_OWNER_PREFIX } from '../../libs/events';
import { dumpProjections } from '../support/projection-dump';

/**
 * A replay of the async projections (trace_events, prefix_reports, usage) over PGlite, while a live
 * projector keeps working and events keep coming: the rebuilt rows equal the incremental build.
 */
describe('AsyncProjector.replay (PGlite)', () => {
  let open: OpenDatabase;
  let store: EventStore;
  beforeEach(async () => {
    open = await openDatabase({ kind: 'pglite' });
    await migrateToLatest(open.db);
    store = new EventStore(open.db);
  });
  afterEach(() => open.close());

  const quiet = { log: () => undefined, warn: () => undefined, error: () => undefined };
  /** One turn of a session: a call of each of two runtimes and their answers, the story growing each turn. */
  async function turn(session: string, n: number) {
    const version = await store.streamVersion(session);
    const events: NewEvent[] = version === 0 ? [{ type: 'session.created@1', data: { sessionId: session, worldId: null, locale: 'en' } }] : [];
    const turnId = randomUUID();
    for (const runtimeId of ['narrator', 'scene']) {
      const callId = randomUUID();
      const messages = [
        { role: 'system', content: `You are the ${runtimeId}.` },
        ...Array.from({ length: n }, (_, i) => ({ role: 'user', content: `move ${i} in ${session} 😀` })),
      ];
      const base = { executionId: `e-${session}-${n}`, turnId, callId, pluginId: 'p', runtimeId };
      events.push(
        { type: 'llm.calling@1', data: { ...base, attempt: 1, provider: 'openai-chat', model: 'm', body: JSON.stringify({ model: 'm', messages }) } },
        { type: 'llm.responded@1', data: { ...base, finishReason: 'stop', usage: { inputTokens: 10 * n, outputTokens: 5, cachedInputTokens: 3 * n } } },
      );
    }
    await store.append({ tenantId: `tenant-${session}`, streamId: session, expectedVersion: version, events });
  }
  const asyncTables = async () => {
    const { trace_events, prefix_reports, usage_daily, usage_calls } = await dumpProjections(open.db);
    return { trace_events, prefix_reports, usage_daily, usage_calls };
  };

  it('rebuilds rows identical to the incremental build, while a live projector and appends go on', async () => {
    const sessions = Array.from({ length: 8 }, (_, i) => `s${i}`);
    for (let n = 1; n <= 3; n++) for (const s of sessions) await turn(s, n);
    const live = createAsyncProjector(open.db, { owner: 'w1', logger: quiet, batchSize: 5 });
    await live.drain();

    // the replay takes the shards from the live owner; appends and live passes go on meanwhile
    const replaying = new AsyncProjector({ db: open.db, projections: ASYNC_PROJECTIONS, owner: `${REPLAY_OWNER_PREFIX}1`, logger: quiet, batchSize: 4 });
    const progress: string[] = [];
    let done = false;
    let progressed: () => void = () => undefined;
    const replay = replaying
      .replay({
        onProgress: (p) => {
          if (!p.done) return;
          progress.push(`${p.projection}/${p.shard}`);
          progressed();
        },
      })
      .finally(() => {
        done = true;
        progressed();
      });
    // a round of appends and a live pass from the replay's start, then one each time it has finished 8 more shards
    // (twice in each projection's replay), until it ends: not as fast as they go, when each round lengthens the
    // replay (it reads each shard up to its head) and the replay ran 40 rounds and more
    for (let n = 4; !done || n < 6; n++) {
      for (const s of sessions) await turn(s, n);
      await live.runOnce();
      const shardsDone = progress.length;
      await new Promise<void>((resolve) => {
        progressed = () => (done || progress.length >= shardsDone + 8 ? resolve() : undefined);
        progressed();
      });
    }
    const result = await replay;
    expect(result.projections.map((p) => [p.name, p.quarantined])).toEqual([
      ['trace_events', []],
      ['prefix_reports', []],
      ['usage', []],
    ]);
    expect(progress).toHaveLength(3 * 16);
    // given back at the end: the live projector takes the shards again and reaches the head
    await live.drain();
    expect((await live.status()).map((p) => [p.name, p.state, p.lag])).toEqual([
      ['trace_events', 'running', 0],
      ['prefix_reports', 'running', 0],
      ['usage', 'running', 0],
    ]);
    const afterReplay = await asyncTables();
    expect(afterReplay.prefix_reports.length).toBe(afterReplay.trace_events.length / 2);
    // every call answered: one usage row per session (one tenant each, one model, two runtimes), each call counted once
    expect(afterReplay.usage_calls.length).toBe(afterReplay.prefix_reports.length);
    expect(afterReplay.usage_daily.reduce<number>((n, r) => n + Number((r as { calls: number }).calls), 0)).toBe(afterReplay.prefix_reports.length);

    // the same log built incrementally from scratch, in another database, gives the same rows
    const events = await open.db.selectFrom('events').selectAll().orderBy('global_position').execute();
    const fresh = await openDatabase({ kind: 'pglite' });
    try {
      await migrateToLatest(fresh.db);
      const freshStore = new EventStore(fresh.db);
      for (const e of events) {
        await freshStore.append({
          tenantId: e.tenant_id,
          streamId: e.stream_id,
          expectedVersion: e.stream_version - 1,
          events: [{ type: e.type, data: e.data, metadata: e.metadata } as NewEvent],
        });
      }
      await createAsyncProjector(fresh.db, { owner: 'w2', logger: quiet, batchSize: 3 }).drain();
      const rebuilt = await dumpProjections(fresh.db);
      const strip = (rows: unknown[]) => rows.map((r) => ({ ...(r as Record<string, unknown>), recorded_at: null }));
      expect(strip(rebuilt.trace_events)).toEqual(strip(afterReplay.trace_events));
      expect(rebuilt.prefix_reports).toEqual(afterReplay.prefix_reports);
      expect(rebuilt.usage_calls).toEqual(afterReplay.usage_calls);
      const undated = (rows: unknown[]) => rows.map((r) => ({ ...(r as Record<string, unknown>), day: null }));
      expect(undated(rebuilt.usage_daily)).toEqual(undated(afterReplay.usage_daily));
    } finally {
      await fresh.close();
    }
  }, 120_000);
});
