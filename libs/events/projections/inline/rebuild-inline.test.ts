import { sql } from 'kysely';
import { dumpProjections } from '../../../../test/support/projection-dump';
import {
  type CommittedMessage,
  EventStore,
  InlineProjectionFailedError,
  inlineProjections,
  migrateToLatest,
  type NewEvent,
  openDatabase,
  type OpenDatabase,
  rebuildInline,
  summariesProjection,
  upgradeInline,
} from '../..';

const say = (messageId: string, text: string): CommittedMessage => ({
  messageId,
  role: 'user',
  sourceType: 'player',
  pluginId: null,
  runtimeId: null,
  outputKind: null,
  text,
});

/** One whole turn of session `s`: input, claim, commit. */
const turn = (s: string, n: number): NewEvent[] => {
  const [executionId, turnId] = [`${s}-e${n}`, `${s}-u${n}`];
  return [
    { type: 'player-input.submitted@1', data: { executionId, turnId, messageId: `${s}-m${n}`, text: `move ${n} 😀` } },
    { type: 'execution.started@1', data: { executionId, turnId, attempt: 1, workerId: 'w' } },
    { type: 'turn.committed@1', data: { executionId, turnId, attempt: 1, messages: [say(`${s}-m${n}`, `move ${n} 😀`), say(`${s}-r${n}`, `答 ${n}`)] } },
  ];
};
const compaction = (s: string, n: number): NewEvent => ({
  type: 'history.compacted@1',
  data: {
    compactionId: `${s}-c${n}`,
    summaries: [{ summaryId: `${s}-sum${n}`, messageIds: [`${s}-m${n}`, `${s}-r${n}`], replacesSummaryIds: [], content: `sum ${n}` }],
  },
});

/**
 * Streams per page of the rebuilds here, and the streams the log holds: three pages. The engine's
 * page is 200; a small one crosses the same page boundaries with 45 streams (this file: 7.6 CPU-s,
 * against 16.7 with 250 streams and the default page, nearly all of it PGlite appending and rebuilding).
 */
const PAGE = 20;
const STREAMS = 45;

describe('rebuildInline (PGlite)', () => {
  let open: OpenDatabase;
  let store: EventStore;
  beforeAll(async () => {
    open = await openDatabase({ kind: 'pglite' });
    await migrateToLatest(open.db);
    store = new EventStore(open.db, { inline: inlineProjections });
  }, 120_000);
  afterAll(() => open.close());

  const append = async (tenantId: string, streamId: string, events: NewEvent[]) =>
    store.append({ tenantId, streamId, expectedVersion: await store.streamVersion(streamId), events });

  it('rebuilds, stream by stream, rows equal to the ones the appends wrote; stale rows and old failures of a stream are replaced', async () => {
    // more than one page of streams
    for (let i = 0; i < STREAMS; i++) {
      const s = `s${String(i).padStart(3, '0')}`;
      await append(i % 2 ? 'tenant-a' : 'tenant-b', s, [{ type: 'session.created@1', data: { sessionId: s, worldId: null, locale: 'en' } }, ...turn(s, 1)]);
      if (i % 10 === 0) await append(i % 2 ? 'tenant-a' : 'tenant-b', s, [...turn(s, 2), compaction(s, 1)]);
    }
    const live = await dumpProjections(open.db);
    expect(live.turn_messages).toHaveLength(STREAMS * 2 + 5 * 2);
    expect(live.summaries).toHaveLength(5);

    // a stream's rows gone wrong, and a failure an old projection runner left for it
    await sql`update turn_messages set text = 'tampered' where session_id = 's010'`.execute(open.db);
    await sql`delete from summaries where session_id = 's020'`.execute(open.db);
    await sql`insert into projection_failures (projection, stream_id, tenant_id, global_position, event_type, error, attempts, next_retry_at)
              values ('summaries', 's020', 'tenant-b', 1, 'history.compacted@1', 'old', 1, now())`.execute(open.db);

    const progress: number[] = [];
    const result = await rebuildInline({ db: open.db, streamPage: PAGE, projections: inlineProjections, onProgress: (p) => progress.push(p.streams) });
    expect(result).toEqual({ streams: STREAMS, events: STREAMS * 3 + 5 * 4, failures: [] });
    expect(progress).toEqual([20, 40, 45]);
    expect(await dumpProjections(open.db)).toEqual(live);
    expect(await open.db.selectFrom('projection_failures').selectAll().execute()).toEqual([]);
  }, 120_000);

  it('a page size that is not a positive integer is refused before anything is rebuilt', async () => {
    for (const streamPage of [0, -1, 1.5, Number.NaN])
      await expect(rebuildInline({ db: open.db, streamPage, projections: inlineProjections })).rejects.toThrow(/streamPage must be a positive integer/);
  });

  it('appends made while the rebuild runs end in the rows (each lands before or after its stream is rebuilt)', async () => {
    const streams = { s000: 'tenant-b', s020: 'tenant-b', s043: 'tenant-a', s044: 'tenant-b', 'new-stream': 'tenant-c' };
    const rebuilding = rebuildInline({ db: open.db, streamPage: PAGE, projections: inlineProjections });
    await Promise.all([
      rebuilding,
      ...Object.entries(streams).map(async ([s, tenant]) => {
        for (let n = 10; n < 13; n++) await append(tenant, s, turn(s, n));
      }),
    ]);
    const after = await dumpProjections(open.db);
    const rows = after as unknown as Record<'turn_messages' | 'executions', Record<string, unknown>[]>;
    for (const s of Object.keys(streams)) {
      const added = [10, 11, 12].flatMap((n) => [`${s}-m${n}`, `${s}-r${n}`]);
      expect(rows.turn_messages.filter((m) => added.includes(String(m.message_id))).map((m) => m.message_id)).toEqual(added);
      expect(rows.executions.filter((e) => e.session_id === s && e.status === 'committed').length).toBeGreaterThanOrEqual(3);
    }
    // and a rebuild from the log alone gives the same rows
    await rebuildInline({ db: open.db, streamPage: PAGE, projections: inlineProjections });
    expect(await dumpProjections(open.db)).toEqual(after);
  }, 120_000);

  it('a stream a projection cannot apply is reported with the projection and event type, keeps its rows; the others are rebuilt', async () => {
    // a summaries projection that cannot read one stream's compactions (as a bug would)
    const fragile = {
      ...summariesProjection,
      async applyBatch(...args: Parameters<typeof summariesProjection.applyBatch>) {
        if (args[1].some((e) => e.streamId === 's030' && e.type === 'history.compacted@1')) throw new Error('cannot apply');
        await summariesProjection.applyBatch(...args);
      },
    };
    const before = await dumpProjections(open.db);
    await sql`delete from turn_messages where session_id = 's040'`.execute(open.db);
    const result = await rebuildInline({ db: open.db, streamPage: PAGE, projections: [inlineProjections[0], inlineProjections[1], fragile] });
    expect(result.failures).toHaveLength(1);
    expect(result.failures[0].streamId).toBe('s030');
    expect(result.failures[0].error).toBeInstanceOf(InlineProjectionFailedError);
    expect(result.failures[0].error).toMatchObject({ projection: 'summaries', eventType: 'history.compacted@1', streamId: 's030' });
    expect(await dumpProjections(open.db)).toEqual(before);
  }, 120_000);

  it('upgradeInline: after the upgrade, only the streams with events past the old runner`s checkpoints are rebuilt, once', async () => {
    // the old runner had applied everything up to here (its checkpoints), then events came that it never applied
    const head = await store.headPosition();
    await open.db
      .insertInto('projection_checkpoints')
      .values(inlineProjections.map((p) => ({ name: p.name, position: String(head) })))
      .onConflict((oc) => oc.column('name').doUpdateSet({ position: String(head) }))
      .execute();
    const legacy = new EventStore(open.db); // appends as before the upgrade: no inline rows
    await legacy.append({ tenantId: 'tenant-b', streamId: 's006', expectedVersion: await legacy.streamVersion('s006'), events: turn('s006', 7) });
    await legacy.append({ tenantId: 'tenant-c', streamId: 'legacy-new', expectedVersion: 0, events: [...turn('legacy-new', 1), compaction('legacy-new', 1)] });

    const result = await upgradeInline({ db: open.db, streamPage: PAGE, projections: inlineProjections });
    expect(result).toEqual({ streams: 2, events: 6 + 4, failures: [] }); // s006: turns 1 and 7; legacy-new: a turn and a compaction
    const upgraded = await dumpProjections(open.db);
    await rebuildInline({ db: open.db, streamPage: PAGE, projections: inlineProjections });
    expect(await dumpProjections(open.db)).toEqual(upgraded);
    expect(await open.db.selectFrom('projection_checkpoints').selectAll().execute()).toEqual([]);
    expect(await upgradeInline({ db: open.db, streamPage: PAGE, projections: inlineProjections })).toBeNull();
  }, 120_000);
});
