import { sql } from 'kysely';
import { sqlTextsOf } from '../../test/support/query-counter';
import { migrateToLatest, openDatabase, type OpenDatabase, type StoredEvent } from '../events';
import { usageProjection } from './usage-projection';

let open: OpenDatabase;
beforeAll(async () => {
  open = await openDatabase({ kind: 'pglite' });
  await migrateToLatest(open.db);
}, 120_000);
afterAll(() => open.close());

let position = 0;
const stored = (type: StoredEvent['type'], data: unknown): StoredEvent =>
  ({
    globalPosition: ++position,
    tenantId: 't1',
    streamId: 's1',
    streamVersion: position,
    type,
    data,
    metadata: {},
    recordedAt: '2026-03-04T05:06:07.000Z',
  }) as StoredEvent;
const calling = (callId: string) =>
  stored('llm.calling@1', {
    executionId: 'e',
    turnId: 'u',
    attempt: 1,
    callId,
    pluginId: 'narrator',
    runtimeId: 'narrator',
    provider: 'openai-chat',
    model: 'gpt',
    body: '{}',
  });
const responded = (callId: string) =>
  stored('llm.responded@1', {
    executionId: 'e',
    turnId: 'u',
    callId,
    pluginId: 'narrator',
    runtimeId: 'narrator',
    finishReason: 'stop',
    usage: { inputTokens: 10, cachedInputTokens: 4, outputTokens: 2 },
  });

/** The SQL texts `events` are applied with, in one transaction. */
const textsOf = (events: StoredEvent[]) => sqlTextsOf(open.db, (trx) => usageProjection.applyBatch(trx, events));

describe('usage (async projection): its statements', () => {
  it('are one statement, the same text whatever the number of calls in a batch (none built per batch)', async () => {
    const one = await textsOf([calling('a1'), responded('a1')]);
    const three = await textsOf(['b1', 'b2', 'b3'].flatMap((c) => [calling(c), responded(c)]));
    // one statement: before, a read of the calls, then the day's sums and the calls recorded (3)
    expect(one).toHaveLength(1);
    expect(one[0].replace(/\s+/g, ' ').trim()).toMatch(/^with requests as .*insert into usage_daily .*update usage_calls .*insert into usage_calls /);
    expect(three).toEqual(one);
    // calls recorded unanswered by an earlier batch, answered in this one
    await textsOf([calling('c1'), calling('c2'), calling('c3')]);
    const answeredOne = await textsOf([responded('c1')]);
    const answeredTwo = await textsOf([responded('c2'), responded('c3')]);
    expect(answeredOne).toHaveLength(1); // before: read the calls, add to the day's sums, mark them answered (3)
    expect(answeredTwo).toEqual(answeredOne);
    const { rows } = await sql<{
      calls: number;
      input_tokens: number;
    }>`select calls, input_tokens::int as input_tokens from usage_daily where stream_id = 's1'`.execute(open.db);
    expect(rows).toEqual([{ calls: 7, input_tokens: 70 }]);
    const answered = await sql<{ n: string }>`select count(*) as n from usage_calls where stream_id = 's1' and answered`.execute(open.db);
    expect(Number(answered.rows[0].n)).toBe(7);
  });
});
