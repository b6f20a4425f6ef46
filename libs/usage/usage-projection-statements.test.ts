import { sql } from 'kysely';
import { sqlTextsOf } from '../../test/support/query-counter';
import { migrateToLatest, openDatabase, type OpenDatabase, type StoredEvent } from '../events';
import { callKey, type KnownCall, planUsage } from './usage-plan';
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

  it('writes the rows planUsage gives, batch after batch, whatever the order of requests and answers', async () => {
    // in a stream of its own: answers before their request, requests twice, answers twice, answers of no call, calls answered in a later batch
    const at = (e: StoredEvent): StoredEvent => ({ ...e, streamId: 'order', tenantId: 't2' });
    const batches: StoredEvent[][] = [
      [responded('o1'), calling('o1'), calling('o1'), responded('o1'), responded('o1')].map(at),
      [calling('o2'), calling('o3'), responded('o4'), responded('o2')].map(at),
      [responded('o3'), calling('o2'), responded('o2'), calling('o4'), calling('o3'), responded('o3')].map(at),
      [responded('o4'), responded('o4'), calling('o5')].map(at),
      [responded('o5'), responded('o1')].map(at),
    ];
    const known = new Map<string, KnownCall>();
    const sums = new Map<string, { calls: number; input: number }>();
    for (const batch of batches) {
      await open.db.transaction().execute((trx) => usageProjection.applyBatch(trx, batch));
      const plan = planUsage(batch, known);
      for (const c of plan.recorded) known.set(callKey(c.streamId, c.callId), { ...c });
      for (const c of plan.answered) known.get(callKey(c.streamId, c.callId))!.answered = true;
      for (const r of plan.increments) {
        const key = `${r.model}/${r.runtime}`;
        const sum = sums.get(key) ?? { calls: 0, input: 0 };
        sums.set(key, { calls: sum.calls + r.calls, input: sum.input + r.inputTokens });
      }
      const calls = await sql<{
        call_id: string;
        answered: boolean;
      }>`select call_id, answered from usage_calls where stream_id = 'order' order by call_id`.execute(open.db);
      expect(calls.rows).toEqual([...known.values()].sort((a, b) => (a.callId < b.callId ? -1 : 1)).map((c) => ({ call_id: c.callId, answered: c.answered })));
      const daily = await sql<{ key: string; calls: number; input: number }>`
        select model || '/' || runtime as key, calls, input_tokens::int as input from usage_daily where stream_id = 'order' order by 1`.execute(open.db);
      expect(daily.rows).toEqual([...sums].sort().map(([key, sum]) => ({ key, ...sum })));
    }
    expect([...known.values()].filter((c) => c.answered)).toHaveLength(5);
  });
});
