import { type CompactionValidation, compactionLimits, validateCompaction } from '../../../context';
import {
  type CommittedMessage,
  CompactionPrefixMismatchError,
  EventStore,
  inlineProjections,
  migrateToLatest,
  type NewEvent,
  openDatabase,
  type OpenDatabase,
  ReadModels,
  rebuildInline,
} from '../../../events';
import type { CompactSegment } from '../../../plugins-sdk';
import { dumpProjections } from '../../../../test/support/projection-dump';
import { HistoryFold } from '../../history/history-fold';
import { compactionEvent } from '..';

const say = (messageId: string, role: 'user' | 'assistant', text: string): CommittedMessage => ({
  messageId,
  role,
  sourceType: role === 'user' ? 'player' : 'runtime',
  pluginId: role === 'user' ? null : 'narrator',
  runtimeId: role === 'user' ? null : 'story',
  outputKind: role === 'user' ? null : 'story',
  text,
});
const turn = (n: number): NewEvent => ({
  type: 'turn.committed@1',
  data: { executionId: `e${n}`, turnId: `u${n}`, attempt: 1, messages: [say(`m${n}`, 'user', `走 ${n} 步`), say(`r${n}`, 'assistant', `河边 ${n} 😀`)] },
});
const segment = (s: Partial<CompactSegment>): CompactSegment => ({ messageIds: [], replacesSummaryIds: [], content: 'summary', focusSections: [], ...s });

/**
 * The framework's side of history.compact@2 on PGlite with the inline projections: a provider's
 * result is validated against the stored history, saved as one event in one append, and a
 * compaction that a history transform reordered can never mark non-adjacent messages.
 */
describe('compaction: validate, one event, one append (PGlite, inline projections)', () => {
  let open: OpenDatabase;
  let store: EventStore;
  let reads: ReadModels;
  const [t, s] = ['tenant', 'session'];
  let ids = 0;
  beforeAll(async () => {
    open = await openDatabase({ kind: 'pglite' });
    await migrateToLatest(open.db);
    store = new EventStore(open.db, { inline: inlineProjections });
    reads = new ReadModels(open.db);
    await store.append({
      tenantId: t,
      streamId: s,
      expectedVersion: 0,
      events: [{ type: 'session.created@1', data: { sessionId: s, worldId: null, locale: 'zh-Hans' } }, ...[1, 2, 3, 4].map(turn)],
    });
  }, 120_000);
  afterAll(() => open.close());

  /** What the barrier does around the provider: bounded reads, validation against them. */
  const validate = async (segments: CompactSegment[], shown = 8): Promise<CompactionValidation> =>
    validateCompaction({
      uncompactedPrefix: await reads.uncompactedPrefix(t, s, shown),
      summaries: (await reads.summaries(t, s)).map((x) => ({ summaryId: x.id, content: x.content })),
      result: { summaries: segments },
      limits: compactionLimits(8_000),
      newSummaryId: () => `sum${++ids}`,
    });
  const save = async (v: CompactionValidation, compactionId: string) => {
    if (v.status !== 'accepted') throw new Error(`not accepted: ${JSON.stringify(v)}`);
    return store.append({ tenantId: t, streamId: s, expectedVersion: await store.streamVersion(s), events: [compactionEvent(v.plan, compactionId)] });
  };
  const compactedIds = async () => (await reads.messages(t, s)).filter((m) => m.compacted).map((m) => m.messageId);

  it('an accepted result is one history.compacted@1 event: its messages marked, its summary saved', async () => {
    const appended = await save(
      await validate([segment({ messageIds: ['m1', 'r1', 'm2', 'r2'], content: '他们在河边相遇。', focusSections: ['人物'] })]),
      'c1',
    );
    expect(appended.events).toHaveLength(1);
    expect(appended.events[0]).toMatchObject({
      type: 'history.compacted@1',
      data: {
        compactionId: 'c1',
        summaries: [
          {
            summaryId: 'sum1',
            messageIds: ['m1', 'r1', 'm2', 'r2'],
            replacesSummaryIds: [],
            content: '他们在河边相遇。',
            truncated: false,
            focusSections: ['人物'],
          },
        ],
      },
    });
    expect(await compactedIds()).toEqual(['m1', 'r1', 'm2', 'r2']);
    expect(await reads.uncompactedPrefix(t, s, 10)).toEqual(['m3', 'r3', 'm4', 'r4']);
    expect(await reads.summaries(t, s, { withMessageIds: true })).toEqual([
      { id: 'sum1', content: '他们在河边相遇。', messageIds: ['m1', 'r1', 'm2', 'r2'], truncated: false },
    ]);
  });

  it('a history transform that reordered the prefix cannot mark non-adjacent messages: rejected by validation, and its event refused by the append', async () => {
    // the prompt showed r3 before m3: the provider summarizes "the first message" it saw
    const v = await validate([segment({ messageIds: ['r3'] })]);
    expect(v).toEqual({ status: 'rejected', problems: [{ kind: 'skipped-message', segment: 0, messageId: 'm3' }] });
    // even appended without validation, the safeguard in the append's transaction refuses it
    const before = await dumpProjections(open.db);
    const version = await store.streamVersion(s);
    const forged: NewEvent = {
      type: 'history.compacted@1',
      data: { compactionId: 'forged', summaries: [{ summaryId: 'forged', messageIds: ['r3', 'r4'], replacesSummaryIds: [], content: 'x' }] },
    };
    const failure = await store.append({ tenantId: t, streamId: s, expectedVersion: version, events: [forged] }).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(CompactionPrefixMismatchError);
    expect(failure).toMatchObject({ code: 'COMPACTION_PREFIX_MISMATCH', category: 'conflict', named: ['r3', 'r4'], stored: ['m3', 'r3'] });
    expect(await store.streamVersion(s)).toBe(version);
    expect(await dumpProjections(open.db)).toEqual(before);
  });

  it('a later compaction merges the oldest segments (keeping the oldest id, place and creation time) and adds one of new messages, in one event', async () => {
    await save(await validate([segment({ messageIds: ['m3'], content: '第二段' })]), 'c2');
    const [first] = await open.db.selectFrom('summaries').selectAll().where('summary_id', '=', 'sum1').execute();
    const v = await validate([segment({ replacesSummaryIds: ['sum1', 'sum2'], content: '合并' }), segment({ messageIds: ['r3', 'm4'], content: '第三段' })]);
    expect(v.status === 'accepted' && v.plan).toMatchObject({ deletedSummaryIds: ['sum2'], keptSummaryIds: [], summaryIds: ['sum1', 'sum3'] });
    const appended = await save(v, 'c3');
    expect(appended.events).toHaveLength(1);
    const rows = await open.db.selectFrom('summaries').selectAll().where('session_id', '=', s).orderBy('seq').execute();
    expect(rows).toEqual([
      { ...first, content: '合并', message_ids: ['m1', 'r1', 'm2', 'r2', 'm3'] },
      expect.objectContaining({ summary_id: 'sum3', seq: 2, message_ids: ['r3', 'm4'], content: '第三段' }),
    ]);
    expect(await compactedIds()).toEqual(['m1', 'r1', 'm2', 'r2', 'm3', 'r3', 'm4']);
    expect(await reads.uncompactedPrefix(t, s, 10)).toEqual(['r4']);
  });

  it('replay rebuilds the same rows, and the in-memory fold of the log (request rebuild) agrees with them', async () => {
    const live = await dumpProjections(open.db);
    expect(live.history_watermarks).toEqual([{ session_id: s, tenant_id: t, compacted_through: 7, turns: 4 }]);
    const result = await rebuildInline({ db: open.db, projections: inlineProjections });
    expect(result.failures).toEqual([]);
    expect(await dumpProjections(open.db)).toEqual(live);

    const fold = new HistoryFold();
    for (const e of await store.readStream(s)) fold.apply(e);
    expect(fold.uncompactedTail(100).map((m) => m.messageId)).toEqual(['r4']);
    expect(fold.summariesWithCoverage()).toEqual((await reads.summaries(t, s, { withMessageIds: true })).map((x) => ({ id: x.id, messageIds: x.messageIds })));
  });
});
