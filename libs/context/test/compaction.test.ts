import {
  acceptedSummaryReply,
  type CompactionLimits,
  compactionLimits,
  type CompactionValidationInput,
  discardingCutReplies,
  estimateTokens,
  type StoredSummary,
  validateCompaction,
} from '..';
import type { CompactSegment, SummaryReply } from '../../plugins-sdk';

const roomy: CompactionLimits = { segmentTokens: 2048, totalTokens: 8192, maxSegments: 8 };
const prefix = ['m1', 'm2', 'm3', 'm4', 'm5'];
const saved = (...ids: string[]): StoredSummary[] => ids.map((summaryId) => ({ summaryId, content: `summary ${summaryId}` }));
const segment = (s: Partial<CompactSegment>): CompactSegment => ({
  messageIds: [],
  replacesSummaryIds: [],
  content: 'They met by the river.',
  focusSections: [],
  ...s,
});

/** Validation with a fixed stored state; ids of new segments are n1, n2, … */
function validate(segments: CompactSegment[], state: Partial<Omit<CompactionValidationInput, 'result'>> = {}) {
  let n = 0;
  return validateCompaction({
    uncompactedPrefix: prefix,
    summaries: [],
    limits: roomy,
    newSummaryId: () => `n${++n}`,
    ...state,
    result: { summaries: segments },
  });
}
const problemsOf = (v: ReturnType<typeof validate>) => (v.status === 'rejected' ? v.problems : []);

describe('history.compact@2: the framework accepts only a continuous uncompacted prefix (spec §1)', () => {
  it('given an uncompacted history, when two segments cover its first messages in order, then they are accepted as one plan', () => {
    const v = validate(
      [segment({ messageIds: ['m1', 'm2'], content: 'one' }), segment({ messageIds: ['m3'], content: 'two', focusSections: ['Places'], truncated: true })],
      {
        summaries: saved('s1'),
      },
    );
    expect(v).toEqual({
      status: 'accepted',
      plan: {
        segments: [
          {
            summaryId: 'n1',
            messageIds: ['m1', 'm2'],
            replacesSummaryIds: [],
            content: 'one',
            focusSections: [],
            truncated: false,
            tokens: estimateTokens('one'),
          },
          {
            summaryId: 'n2',
            messageIds: ['m3'],
            replacesSummaryIds: [],
            content: 'two',
            focusSections: ['Places'],
            truncated: true,
            tokens: estimateTokens('two'),
          },
        ],
        markedMessageIds: ['m1', 'm2', 'm3'],
        deletedSummaryIds: [],
        keptSummaryIds: ['s1'],
        summaryIds: ['s1', 'n1', 'n2'],
        totalTokens: estimateTokens('summary s1') + estimateTokens('one') + estimateTokens('two'),
      },
    });
  });

  it('no segments: nothing to compact now (not a rejection)', () => {
    expect(validate([])).toEqual({ status: 'nothing' });
  });

  it('a segment that does not start at the oldest uncompacted message skips it', () => {
    expect(problemsOf(validate([segment({ messageIds: ['m2', 'm3'] })]))).toEqual([{ kind: 'skipped-message', segment: 0, messageId: 'm1' }]);
  });

  it('a gap inside the prefix, or between two segments, is a skip', () => {
    expect(problemsOf(validate([segment({ messageIds: ['m1', 'm3'] })]))).toEqual([{ kind: 'skipped-message', segment: 0, messageId: 'm2' }]);
    expect(problemsOf(validate([segment({ messageIds: ['m1'] }), segment({ messageIds: ['m3', 'm4'] })]))).toEqual([
      { kind: 'skipped-message', segment: 1, messageId: 'm2' },
    ]);
  });

  it('reordered messages (as a history transform may show them) are rejected', () => {
    expect(problemsOf(validate([segment({ messageIds: ['m2', 'm1'] })]))).toEqual([
      { kind: 'skipped-message', segment: 0, messageId: 'm1' },
      { kind: 'reordered-message', segment: 0, messageId: 'm1' },
    ]);
    // segments out of story order
    expect(problemsOf(validate([segment({ messageIds: ['m3'] }), segment({ messageIds: ['m1', 'm2'] })]))).toEqual([
      { kind: 'skipped-message', segment: 0, messageId: 'm1' },
      { kind: 'skipped-message', segment: 0, messageId: 'm2' },
      { kind: 'reordered-message', segment: 1, messageId: 'm1' },
      { kind: 'reordered-message', segment: 1, messageId: 'm2' },
    ]);
  });

  it('a message named twice, in one segment or in two, is rejected', () => {
    expect(problemsOf(validate([segment({ messageIds: ['m1', 'm1', 'm2'] })]))).toEqual([{ kind: 'duplicate-message', segment: 0, messageId: 'm1' }]);
    expect(problemsOf(validate([segment({ messageIds: ['m1', 'm2'] }), segment({ messageIds: ['m2', 'm3'] })]))).toEqual([
      { kind: 'duplicate-message', segment: 1, messageId: 'm2' },
    ]);
  });

  it('a message that is not uncompacted history of this session (another session`s, compacted already, beyond the read prefix) is foreign', () => {
    expect(problemsOf(validate([segment({ messageIds: ['m1', 'other-session-m9'] })]))).toEqual([
      { kind: 'foreign-message', segment: 0, messageId: 'other-session-m9' },
    ]);
    // m1 and m2 were compacted before: the stored prefix starts at m3
    expect(problemsOf(validate([segment({ messageIds: ['m2', 'm3'] })], { uncompactedPrefix: ['m3', 'm4'] }))).toEqual([
      { kind: 'foreign-message', segment: 0, messageId: 'm2' },
    ]);
  });

  it('a segment covers new messages or old summaries: not both, not neither', () => {
    const summaries = saved('s1', 's2');
    expect(problemsOf(validate([segment({ messageIds: ['m1'], replacesSummaryIds: ['s1'] })], { summaries }))).toEqual([{ kind: 'mixed-segment', segment: 0 }]);
    expect(problemsOf(validate([segment({})], { summaries }))).toEqual([{ kind: 'empty-segment', segment: 0 }]);
  });
});

describe('history.compact@2: merges take old summaries continuously from the oldest', () => {
  const summaries = saved('s1', 's2', 's3');

  it('a merge keeps the id of the oldest segment it replaces; the others are deleted, later ones kept; a new segment goes last', () => {
    const v = validate([segment({ replacesSummaryIds: ['s1', 's2'], content: 'merged' }), segment({ messageIds: ['m1', 'm2'], content: 'new' })], {
      summaries,
    });
    expect(v.status).toBe('accepted');
    if (v.status !== 'accepted') return;
    expect(v.plan.segments.map((s) => s.summaryId)).toEqual(['s1', 'n1']);
    expect(v.plan).toMatchObject({
      markedMessageIds: ['m1', 'm2'],
      deletedSummaryIds: ['s2'],
      keptSummaryIds: ['s3'],
      summaryIds: ['s1', 's3', 'n1'],
      totalTokens: estimateTokens('merged') + estimateTokens('summary s3') + estimateTokens('new'),
    });
  });

  it('two merges in one result go on from each other', () => {
    const v = validate([segment({ replacesSummaryIds: ['s1'] }), segment({ replacesSummaryIds: ['s2', 's3'] })], { summaries });
    expect(v.status === 'accepted' && v.plan).toMatchObject({ deletedSummaryIds: ['s3'], keptSummaryIds: [], summaryIds: ['s1', 's2'] });
  });

  it('summaries not from the oldest, out of order, named twice or unknown are rejected', () => {
    expect(problemsOf(validate([segment({ replacesSummaryIds: ['s2', 's3'] })], { summaries }))).toEqual([
      { kind: 'skipped-summary', segment: 0, summaryId: 's1' },
    ]);
    expect(problemsOf(validate([segment({ replacesSummaryIds: ['s2', 's1'] })], { summaries }))).toEqual([
      { kind: 'skipped-summary', segment: 0, summaryId: 's1' },
      { kind: 'reordered-summary', segment: 0, summaryId: 's1' },
    ]);
    expect(problemsOf(validate([segment({ replacesSummaryIds: ['s1'] }), segment({ replacesSummaryIds: ['s1', 's2'] })], { summaries }))).toEqual([
      { kind: 'duplicate-summary', segment: 1, summaryId: 's1' },
    ]);
    expect(problemsOf(validate([segment({ replacesSummaryIds: ['s1', 'elsewhere'] })], { summaries }))).toEqual([
      { kind: 'foreign-summary', segment: 0, summaryId: 'elsewhere' },
    ]);
  });
});

describe('history.compact@2: kept and new segments keep the limits', () => {
  it('a segment over the per-segment limit is rejected (kept ones are not held to it)', () => {
    const limits = { ...roomy, segmentTokens: 10 };
    const long = 'x'.repeat(44); // 11 tokens
    const summaries = [{ summaryId: 's1', content: 'y'.repeat(400) }];
    expect(problemsOf(validate([segment({ messageIds: ['m1'], content: long })], { limits, summaries }))).toEqual([
      { kind: 'segment-too-long', segment: 0, tokens: 11, limit: 10 },
    ]);
    expect(validate([segment({ messageIds: ['m1'], content: 'x'.repeat(40) })], { limits, summaries }).status).toBe('accepted');
  });

  it('kept plus new over the total limit is rejected; merging old ones into a shorter one brings it under', () => {
    const limits = { ...roomy, totalTokens: 100 };
    const summaries = [
      { summaryId: 's1', content: 'a'.repeat(160) },
      { summaryId: 's2', content: 'b'.repeat(160) },
    ]; // 40 + 40
    const fresh = segment({ messageIds: ['m1'], content: 'c'.repeat(100) }); // 25
    expect(problemsOf(validate([fresh], { limits, summaries }))).toEqual([{ kind: 'total-too-long', tokens: 105, limit: 100 }]);
    const merged = validate([segment({ replacesSummaryIds: ['s1', 's2'], content: 'd'.repeat(120) }), fresh], { limits, summaries });
    expect(merged.status === 'accepted' && merged.plan.totalTokens).toBe(30 + 25);
  });

  it('more than eight segments afterwards is rejected; a merge of the oldest makes room', () => {
    const summaries = saved('s1', 's2', 's3', 's4', 's5', 's6', 's7', 's8');
    expect(problemsOf(validate([segment({ messageIds: ['m1'] })], { summaries }))).toEqual([{ kind: 'too-many-segments', count: 9, limit: 8 }]);
    const v = validate([segment({ replacesSummaryIds: ['s1', 's2'] }), segment({ messageIds: ['m1'] })], { summaries });
    expect(v.status === 'accepted' && v.plan.summaryIds).toEqual(['s1', 's3', 's4', 's5', 's6', 's7', 's8', 'n1']);
  });

  it('every problem of a result is named at once', () => {
    const limits = { segmentTokens: 1, totalTokens: 1, maxSegments: 1 };
    const kinds = problemsOf(
      validate([segment({ messageIds: ['m2'] }), segment({ messageIds: ['m3'], replacesSummaryIds: ['s1'] })], { limits, summaries: saved('s1') }),
    ).map((p) => p.kind);
    expect(kinds).toEqual(['mixed-segment', 'skipped-message', 'segment-too-long', 'segment-too-long', 'total-too-long', 'too-many-segments']);
  });
});

describe('the budget table (upper limits)', () => {
  it.each([
    // effective window → segment ≤ min(4 %, 2048) ≥ 128; total 12 % ≥ 128, ≤ 8192, ≤ window
    [8_000, 320, 960],
    [32_000, 1_280, 3_840],
    [128_000, 2_048, 8_192],
    [1_000_000, 2_048, 8_192],
    [2_000, 128, 240],
    [1_000, 128, 128],
    [100, 100, 100],
  ])('window %i: segment %i, all summaries %i', (window, segmentTokens, totalTokens) => {
    expect(compactionLimits(window)).toEqual({ segmentTokens, totalTokens, maxSegments: 8 });
  });
});

describe('safeguard: a summary reply cut on the output limit is discarded', () => {
  it('a reply that ended on length is not accepted; stop and other endings are', () => {
    expect(acceptedSummaryReply({ text: 'They met and', finishReason: 'length' })).toBeNull();
    expect(acceptedSummaryReply({ text: 'They met.', finishReason: 'stop' })).toBe('They met.');
    expect(acceptedSummaryReply({ text: 'They met.', finishReason: 'other' })).toBe('They met.');
  });

  it('the provider`s summary model never hands on the text of a cut reply', async () => {
    const replies: SummaryReply[] = [
      { text: 'They met and', finishReason: 'length' },
      { text: 'They met.', finishReason: 'stop' },
    ];
    const model = discardingCutReplies({ complete: async () => replies.shift()! });
    const request = { system: 's', prompt: 'p', maxOutputTokens: 10 };
    expect(await model.complete(request)).toEqual({ text: '', finishReason: 'length' });
    expect(await model.complete(request)).toEqual({ text: 'They met.', finishReason: 'stop' });
  });
});
