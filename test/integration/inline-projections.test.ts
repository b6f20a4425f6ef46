import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import {
  type CommittedMessage,
  CompactionPrefixMismatchError,
  EventStore,
  type InlineProjection,
  InlineProjectionFailedError,
  inlineProjections,
  type NewEvent,
  rebuildInline,
} from '../../libs/events';
import { useMigratedDatabase } from '../support/migrated-database';
import { gateProjection, inputEvent } from '../support/append-hooks';
import { dumpProjections } from '../support/projection-dump';

const say = (messageId: string, text: string): CommittedMessage => ({
  messageId,
  role: 'user',
  sourceType: 'player',
  pluginId: null,
  runtimeId: null,
  outputKind: null,
  text,
});
const turn = (s: string, n: number): NewEvent[] => [
  { type: 'player-input.submitted@1', data: { executionId: `${s}-e${n}`, turnId: `${s}-u${n}`, messageId: `${s}-m${n}`, text: `move ${n}` } },
  { type: 'execution.started@1', data: { executionId: `${s}-e${n}`, turnId: `${s}-u${n}`, attempt: 1, workerId: 'w' } },
  { type: 'turn.committed@1', data: { executionId: `${s}-e${n}`, turnId: `${s}-u${n}`, attempt: 1, messages: [say(`${s}-m${n}`, `move ${n} 你好 😀`)] } },
];

/** Inline projections on the real PostgreSQL, with appends really concurrent. */
describe('inline projections on the real PostgreSQL', () => {
  const database = useMigratedDatabase({ poolSize: 20 });

  it('a projection that throws fails that append only: rolled back whole; the stream`s next appends and every other stream go on', async () => {
    const boom: InlineProjection = {
      name: 'boom',
      handles: ['player-input.submitted@1'],
      tables: [],
      async applyBatch(_trx, events) {
        if (events.some((e) => e.type === 'player-input.submitted@1' && e.data.text.includes('BOOM'))) throw new Error('cannot apply BOOM');
      },
    };
    const store = new EventStore(database.open.db, { inline: [...inlineProjections, boom] });
    const run = randomUUID().slice(0, 8);
    const streams = Array.from({ length: 8 }, (_, i) => `${run}-${i}`);
    const bad = streams[3];
    const failures: unknown[] = [];
    await Promise.all(
      streams.map(async (s) => {
        let version = 0;
        for (let n = 1; n <= 5; n++) {
          const events =
            s === bad && n === 3
              ? [inputEvent(s, 30), { ...inputEvent(s, 3), data: { ...inputEvent(s, 3).data, text: 'BOOM' } } as NewEvent]
              : [inputEvent(s, n)];
          try {
            version = (await store.append({ tenantId: 'tenant', streamId: s, expectedVersion: version, events })).version;
          } catch (error) {
            failures.push(error);
          }
        }
      }),
    );
    expect(failures).toHaveLength(1);
    expect(failures[0]).toBeInstanceOf(InlineProjectionFailedError);
    expect(failures[0]).toMatchObject({
      code: 'INLINE_PROJECTION_FAILED',
      category: 'internal',
      projection: 'boom',
      eventType: 'player-input.submitted@1',
      streamId: bad,
      tenantId: 'tenant',
    });
    // nothing of the failed append: not its first event either, nor its executions rows
    expect((await store.readStream(bad)).map((e) => (e.type === 'player-input.submitted@1' ? e.data.executionId : null))).toEqual(
      [1, 2, 4, 5].map((n) => `${bad}-e${n}`),
    );
    const executions = await database.open.db.selectFrom('executions').select(['session_id', 'execution_id']).where('session_id', 'in', streams).execute();
    expect(executions).toHaveLength(8 * 5 - 1);
    expect(executions.map((e) => e.execution_id)).not.toContain(`${bad}-e30`);
  });

  it('rebuildInline while turns are appended: a stream being rebuilt keeps only its own appends waiting; the rows end equal to a rebuild from the log', async () => {
    const store = new EventStore(database.open.db, { inline: inlineProjections });
    const run = randomUUID().slice(0, 8);
    const streams = Array.from({ length: 30 }, (_, i) => `${run}-${String(i).padStart(2, '0')}`);
    const versions = new Map<string, number>();
    const append = async (s: string, n: number) =>
      versions.set(s, (await store.append({ tenantId: 'tenant', streamId: s, expectedVersion: versions.get(s) ?? 0, events: turn(s, n) })).version);
    for (const s of streams) await append(s, 1);
    const live = await dumpProjections(database.open.db);

    // the rebuild holds one stream's transaction database.open (its lock held) until released
    const gate = gateProjection();
    const held = streams[10];
    const hold = gate.hold(held);
    const rebuilding = rebuildInline({ db: database.open.db, projections: [...inlineProjections, gate.projection] });
    await hold.entered;
    // another stream's append does not wait for the rebuild; the held stream's does
    await append(streams[20], 2);
    let heldAppended = false;
    const heldAppend = append(held, 2).then(() => (heldAppended = true));
    while (
      Number(
        (
          await sql<{ n: string }>`select count(*) as n from pg_stat_activity where datname = current_database() and wait_event = 'advisory'`.execute(
            database.open.db,
          )
        ).rows[0].n,
      ) === 0
    ) {
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(heldAppended).toBe(false);
    hold.release();
    // and appends to streams before and after the held one while the rebuild goes on
    await Promise.all([rebuilding, heldAppend, ...streams.filter((_, i) => i % 3 === 0).map((s) => append(s, 3))]);
    expect((await rebuilding).failures).toEqual([]);

    const after = (await dumpProjections(database.open.db)) as unknown as Record<'turn_messages' | 'executions', Record<string, unknown>[]>;
    const mine = (rows: Record<string, unknown>[]) => rows.filter((r) => String(r.session_id).startsWith(run));
    expect(mine(after.turn_messages)).toHaveLength(30 + 2 + 10);
    expect(mine(after.executions).every((e) => e.status === 'committed')).toBe(true);
    expect(mine((live as unknown as Record<'turn_messages', Record<string, unknown>[]>).turn_messages)).toHaveLength(30);
    // a quiet rebuild from the log alone gives the same rows
    await rebuildInline({ db: database.open.db, projections: inlineProjections });
    expect(await dumpProjections(database.open.db)).toEqual(after);
  });

  it('compaction safeguard: a compaction whose messages are not the stored uncompacted prefix is refused in the append`s transaction; nothing changes', async () => {
    const store = new EventStore(database.open.db, { inline: inlineProjections });
    const s = `${randomUUID().slice(0, 8)}-compaction`;
    await store.append({ tenantId: 't', streamId: s, expectedVersion: 0, events: [...turn(s, 1), ...turn(s, 2), ...turn(s, 3)] });
    const compaction = (n: number, messageIds: string[]): NewEvent => ({
      type: 'history.compacted@1',
      data: { compactionId: `${s}-c${n}`, summaries: [{ summaryId: `${s}-sum${n}`, messageIds, replacesSummaryIds: [], content: `摘要 ${n}` }] },
    });
    await store.append({ tenantId: 't', streamId: s, expectedVersion: 9, events: [compaction(1, [`${s}-m1`])] });
    const before = await dumpProjections(database.open.db);
    // m3 before m2 (as a history transform may show them): not adjacent to what is compacted
    const failure = await store
      .append({ tenantId: 't', streamId: s, expectedVersion: 10, events: [compaction(2, [`${s}-m3`, `${s}-m2`])] })
      .catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(CompactionPrefixMismatchError);
    expect(failure).toMatchObject({ code: 'COMPACTION_PREFIX_MISMATCH', category: 'conflict', stored: [`${s}-m2`, `${s}-m3`] });
    expect(await store.streamVersion(s)).toBe(10);
    expect(await dumpProjections(database.open.db)).toEqual(before);
    const rows = await sql<{
      message_id: string;
      compacted: boolean;
    }>`select message_id, compacted from turn_messages where session_id = ${s} order by ord`.execute(database.open.db);
    expect(rows.rows).toEqual([
      { message_id: `${s}-m1`, compacted: true },
      { message_id: `${s}-m2`, compacted: false },
      { message_id: `${s}-m3`, compacted: false },
    ]);
  });
});
