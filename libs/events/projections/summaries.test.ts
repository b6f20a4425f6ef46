import { projectionSpec, uniqueIds } from '../../../test/support/projection-spec';
import { InlineProjectionFailedError } from '../errors';
import type { NewEvent } from '../event-types';
import { summariesProjection } from './summaries';

const spec = projectionSpec({ inline: summariesProjection });
beforeAll(() => spec.start(), 120_000);
afterAll(() => spec.stop());

type Segment = { summaryId: string; messageIds?: string[]; replacesSummaryIds?: string[]; content: string; truncated?: boolean };
const compacted = (compactionId: string, ...segments: Segment[]): NewEvent => ({
  type: 'history.compacted@1',
  data: { compactionId, summaries: segments.map((s) => ({ messageIds: [], replacesSummaryIds: [], ...s })) },
});

describe('summaries (inline projection)', () => {
  it('given nothing, when a compaction saves two segments, then they are numbered in story order', async () => {
    const id = uniqueIds();
    const [t, s] = [id('t'), id('s')];
    await spec.check({
      when: [
        {
          tenant: t,
          stream: s,
          events: [
            compacted(
              id('c'),
              { summaryId: id('a'), messageIds: ['m1', 'm2'], content: 'They met.' },
              { summaryId: id('b'), messageIds: ['m3'], content: 'They left.', truncated: true },
            ),
          ],
        },
      ],
      then: ({ at }) => ({
        summaries: [
          { summary_id: id('a'), tenant_id: t, session_id: s, seq: 1, content: 'They met.', message_ids: ['m1', 'm2'], truncated: false, created_at: at(0) },
          { summary_id: id('b'), tenant_id: t, session_id: s, seq: 2, content: 'They left.', message_ids: ['m3'], truncated: true, created_at: at(0) },
        ],
      }),
    });
  });

  it('a merge keeps the oldest replaced id, place and creation time, covers every message of both, and leaves kept segments as they were', async () => {
    const id = uniqueIds();
    const [t, s] = [id('t'), id('s')];
    await spec.check({
      given: [
        { tenant: t, stream: s, events: [compacted(id('c1'), { summaryId: id('a'), messageIds: ['m1'], content: 'one' })] },
        { tenant: t, stream: s, events: [compacted(id('c2'), { summaryId: id('b'), messageIds: ['m2'], content: 'two' })] },
        { tenant: t, stream: s, events: [compacted(id('c3'), { summaryId: id('k'), messageIds: ['m3'], content: 'kept' })] },
      ],
      when: [
        {
          tenant: t,
          stream: s,
          events: [compacted(id('c4'), { summaryId: id('merged'), messageIds: ['m4'], replacesSummaryIds: [id('a'), id('b')], content: 'one and two' })],
        },
      ],
      then: ({ at }) => ({
        summaries: [
          {
            summary_id: id('a'),
            tenant_id: t,
            session_id: s,
            seq: 1,
            content: 'one and two',
            message_ids: ['m1', 'm2', 'm4'],
            truncated: false,
            created_at: at(0),
          },
          { summary_id: id('k'), tenant_id: t, session_id: s, seq: 3, content: 'kept', message_ids: ['m3'], truncated: false, created_at: at(2) },
        ],
      }),
    });
  });

  it('given three segments, when one compaction merges the two oldest and adds a segment of new messages, then the merge keeps the oldest id, place and creation time, the third is untouched, the new one goes last', async () => {
    const id = uniqueIds();
    const [t, s] = [id('t'), id('s')];
    await spec.check({
      given: [
        { tenant: t, stream: s, events: [compacted(id('c1'), { summaryId: id('a'), messageIds: ['m1'], content: 'one' })] },
        { tenant: t, stream: s, events: [compacted(id('c2'), { summaryId: id('b'), messageIds: ['m2', 'm3'], content: 'two' })] },
        { tenant: t, stream: s, events: [compacted(id('c3'), { summaryId: id('k'), messageIds: ['m4'], content: 'kept', truncated: true })] },
      ],
      when: [
        {
          tenant: t,
          stream: s,
          events: [
            {
              type: 'history.compacted@1',
              data: {
                compactionId: id('c4'),
                summaries: [
                  { summaryId: id('a'), messageIds: [], replacesSummaryIds: [id('a'), id('b')], content: 'one and two', focusSections: ['Plot'] },
                  { summaryId: id('n'), messageIds: ['m5'], replacesSummaryIds: [], content: 'five', truncated: true, focusSections: [] },
                ],
              },
            },
          ],
        },
      ],
      then: ({ at }) => ({
        summaries: [
          {
            summary_id: id('a'),
            tenant_id: t,
            session_id: s,
            seq: 1,
            content: 'one and two',
            message_ids: ['m1', 'm2', 'm3'],
            truncated: false,
            created_at: at(0),
          },
          { summary_id: id('k'), tenant_id: t, session_id: s, seq: 3, content: 'kept', message_ids: ['m4'], truncated: true, created_at: at(2) },
          { summary_id: id('n'), tenant_id: t, session_id: s, seq: 4, content: 'five', message_ids: ['m5'], truncated: true, created_at: at(3) },
        ],
      }),
    });
  });

  it('two merges in one compaction go on from each other', async () => {
    const id = uniqueIds();
    const [t, s] = [id('t'), id('s')];
    const saved = ['a', 'b', 'c', 'd'].map((x, i) => ({
      tenant: t,
      stream: s,
      events: [compacted(id(`c${i}`), { summaryId: id(x), messageIds: [`m${i}`], content: x })],
    }));
    await spec.check({
      given: saved,
      when: [
        {
          tenant: t,
          stream: s,
          events: [
            compacted(
              id('merge'),
              { summaryId: id('a'), replacesSummaryIds: [id('a'), id('b')], content: 'ab' },
              { summaryId: id('c'), replacesSummaryIds: [id('c'), id('d')], content: 'cd' },
            ),
          ],
        },
      ],
      then: ({ at }) => ({
        summaries: [
          { summary_id: id('a'), tenant_id: t, session_id: s, seq: 1, content: 'ab', message_ids: ['m0', 'm1'], truncated: false, created_at: at(0) },
          { summary_id: id('c'), tenant_id: t, session_id: s, seq: 3, content: 'cd', message_ids: ['m2', 'm3'], truncated: false, created_at: at(2) },
        ],
      }),
    });
  });

  it.each([
    ['not from the oldest', ['b', 'c'], /not found among the 2 oldest/],
    ['out of story order', ['b', 'a'], /are not the oldest saved ones in story order/],
    ['named twice', ['a', 'a'], /are not the oldest saved ones in story order/],
  ])('a merge of summaries %s fails the append whole; nothing changes', async (_what, replaces, message) => {
    const id = uniqueIds();
    const [t, s] = [id('t'), id('s')];
    for (const x of ['a', 'b', 'c'])
      await spec.append({ tenant: t, stream: s, events: [compacted(id(`c${x}`), { summaryId: id(x), messageIds: [x], content: x })] });
    const before = await spec.rows([s]);
    const failure = await spec
      .append({ tenant: t, stream: s, events: [compacted(id('m'), { summaryId: id('m'), replacesSummaryIds: replaces.map(id), content: 'merged' })] })
      .catch((e: unknown) => e);
    expect(failure).toMatchObject({ code: 'INLINE_PROJECTION_FAILED', projection: 'summaries' });
    expect((failure as Error).message).toMatch(message);
    expect(await spec.store.streamVersion(s)).toBe(3);
    expect(await spec.rows([s])).toEqual(before);
  });

  it('content is stored unchanged: emoji, ZWJ, CJK, RTL', async () => {
    const id = uniqueIds();
    const [t, s] = [id('t'), id('s')];
    const content = '摘要：他们在河边相遇 😀👨‍👩‍👧 — ملخص القصة — סיכום';
    await spec.check({
      when: [{ tenant: t, stream: s, events: [compacted(id('c'), { summaryId: id('a'), messageIds: ['m1'], content })] }],
      then: ({ at }) => ({
        summaries: [{ summary_id: id('a'), tenant_id: t, session_id: s, seq: 1, content, message_ids: ['m1'], truncated: false, created_at: at(0) }],
      }),
    });
    expect(await spec.readModels.summaries(t, s)).toEqual([{ id: id('a'), content }]);
  });

  it('rows carry their tenant; another tenant reads none of them', async () => {
    const id = uniqueIds();
    await spec.check({
      when: [
        { tenant: id('t1'), stream: id('s1'), events: [compacted(id('c1'), { summaryId: id('a'), content: 'mine' })] },
        { tenant: id('t2'), stream: id('s2'), events: [compacted(id('c2'), { summaryId: id('b'), content: 'theirs' })] },
      ],
      then: ({ at }) => ({
        summaries: [
          { summary_id: id('a'), tenant_id: id('t1'), session_id: id('s1'), seq: 1, content: 'mine', message_ids: [], truncated: false, created_at: at(0) },
          { summary_id: id('b'), tenant_id: id('t2'), session_id: id('s2'), seq: 1, content: 'theirs', message_ids: [], truncated: false, created_at: at(1) },
        ],
      }),
    });
    expect(await spec.readModels.summaries(id('t2'), id('s1'))).toEqual([]);
    expect(await spec.readModels.summaries(id('t1'), id('s2'))).toEqual([]);
  });

  it('a merge of a summary that does not exist fails that append whole (no event, no row); the stream and others go on', async () => {
    const id = uniqueIds();
    const [t, s, other] = [id('t'), id('s'), id('other')];
    await spec.append({ tenant: t, stream: s, events: [compacted(id('c1'), { summaryId: id('a'), messageIds: ['m1'], content: 'one' })] });
    const before = await spec.rows([s]);
    const failure = await spec
      .append({
        tenant: t,
        stream: s,
        events: [
          { type: 'session.created@1', data: { sessionId: s, worldId: null, locale: 'en' } },
          compacted(id('c2'), { summaryId: id('x'), replacesSummaryIds: ['no-such-summary'], content: 'merged' }),
        ],
      })
      .then(
        () => null,
        (e: unknown) => e,
      );
    expect(failure).toBeInstanceOf(InlineProjectionFailedError);
    expect(failure).toMatchObject({
      code: 'INLINE_PROJECTION_FAILED',
      category: 'internal',
      projection: 'summaries',
      eventType: 'history.compacted@1',
      streamId: s,
      tenantId: t,
    });
    expect((failure as Error).message).toContain('no-such-summary');
    // rolled back whole: the first event of that append is not in the log either
    expect(await spec.store.streamVersion(s)).toBe(1);
    expect(await spec.rows([s])).toEqual(before);
    // the stream's next append and another stream's go on
    await spec.append({ tenant: t, stream: s, events: [compacted(id('c3'), { summaryId: id('b'), messageIds: ['m2'], content: 'two' })] });
    await spec.append({ tenant: t, stream: other, events: [compacted(id('c4'), { summaryId: id('o'), content: 'other' })] });
    expect((await spec.readModels.summaries(t, s)).map((x) => x.content)).toEqual(['one', 'two']);
    expect((await spec.readModels.summaries(t, other)).map((x) => x.content)).toEqual(['other']);
  });
});
