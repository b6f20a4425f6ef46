import { sql } from 'kysely';
import { projectionSpec, uniqueIds } from '../../test/support/projection-spec';
import type { NewEvent } from '../events';
import { usageProjection } from './usage-projection';

const spec = projectionSpec({ async: usageProjection });
beforeAll(() => spec.start(), 120_000);
afterAll(() => spec.stop());

type Id = (name: string) => string;
const usage = (input: number, cached: number, output: number) => ({ inputTokens: input, cachedInputTokens: cached, outputTokens: output });
const calling = (id: Id, call: string, model = 'gpt-4.1-mini', runtimeId = 'narrator'): NewEvent => ({
  type: 'llm.calling@1',
  data: { executionId: id('e'), turnId: id('u'), attempt: 1, callId: id(call), pluginId: 'narrator', runtimeId, provider: 'openai-chat', model, body: '{}' },
});
const responded = (id: Id, call: string, used: ReturnType<typeof usage>, runtimeId = 'narrator'): NewEvent => ({
  type: 'llm.responded@1',
  data: { executionId: id('e'), turnId: id('u'), callId: id(call), pluginId: 'narrator', runtimeId, finishReason: 'stop', usage: used },
});
const summaryRequested = (id: Id, request: string): NewEvent => ({
  type: 'compaction.summary-requested@1',
  data: {
    executionId: id('e'),
    turnId: id('u'),
    attempt: 1,
    requestId: id(request),
    pluginId: 'history-compaction',
    requestKey: `k-${id(request)}`,
    request: { system: 's', prompt: 'p', maxOutputTokens: 100 },
    slot: 'fast',
    provider: 'openai-chat',
    model: 'gpt-4.1-nano',
    body: '{}',
  },
});
const summaryResponded = (id: Id, request: string, used: ReturnType<typeof usage>): NewEvent => ({
  type: 'compaction.summary-responded@1',
  data: { executionId: id('e'), turnId: id('u'), requestId: id(request), finishReason: 'stop', providerFinishReason: 'stop', text: 'summary', usage: used },
});
const generationRequested = (id: Id, call: string): NewEvent => ({
  type: 'world-generation.call-requested@1',
  data: {
    jobId: id('job'),
    callId: id(call),
    round: 0,
    purpose: 'draft',
    template: 'world-generation',
    slot: 'story',
    provider: 'openai-chat',
    model: 'gpt-4.1-mini',
    body: '{}',
  },
});
const generationResponded = (id: Id, call: string, used: ReturnType<typeof usage>): NewEvent => ({
  type: 'world-generation.call-responded@1',
  data: { jobId: id('job'), callId: id(call), finishReason: 'stop', text: '{}', usage: used },
});

/** The tenant's rows, in a fixed order, as plain values (the day as `YYYY-MM-DD`, sums as numbers). */
async function usageRows(tenant: string) {
  const { rows } = await sql<Record<string, unknown>>`
    select day::text as day, stream_id, session_id, model, runtime, calls, input_tokens::int as input, cached_input_tokens::int as cached, output_tokens::int as output
    from usage_daily where tenant_id = ${tenant} order by day, stream_id, model, runtime`.execute(spec.db);
  return rows;
}
async function callRows(tenant: string) {
  const { rows } = await sql`select call_id, model, runtime, answered from usage_calls where tenant_id = ${tenant} order by call_id`.execute(spec.db);
  return rows;
}
const row = (at: { day: string; stream: string; session: string | null; model: string; runtime: string }, calls: number, u: ReturnType<typeof usage>) => ({
  day: at.day,
  stream_id: at.stream,
  session_id: at.session,
  model: at.model,
  runtime: at.runtime,
  calls,
  input: u.inputTokens,
  cached: u.cachedInputTokens,
  output: u.outputTokens,
});

describe('usage (async projection): given model-call events, then the rows', () => {
  it('given a call, when it is answered, then one call with its usage under the request’s model and runtime, on the answer’s UTC day', async () => {
    const id = uniqueIds();
    const [t, s] = [id('t'), id('s')];
    await spec.append({ tenant: t, stream: s, events: [calling(id, 'c1')] });
    expect(await usageRows(t)).toEqual([]);
    expect(await callRows(t)).toEqual([{ call_id: id('c1'), model: 'gpt-4.1-mini', runtime: 'narrator/narrator', answered: false }]);
    const [answer] = await spec.append({ tenant: t, stream: s, events: [responded(id, 'c1', usage(100, 40, 7))] });
    const day = answer.recordedAt.slice(0, 10);
    expect(await usageRows(t)).toEqual([row({ day, stream: s, session: s, model: 'gpt-4.1-mini', runtime: 'narrator/narrator' }, 1, usage(100, 40, 7))]);
    expect(await callRows(t)).toEqual([{ call_id: id('c1'), model: 'gpt-4.1-mini', runtime: 'narrator/narrator', answered: true }]);
  });

  it('calls of one day, stream, model and runtime are summed; another model or runtime is its own row; unanswered calls count nothing', async () => {
    const id = uniqueIds();
    const [t, s] = [id('t'), id('s')];
    const [first] = await spec.append({
      tenant: t,
      stream: s,
      events: [
        calling(id, 'c1'),
        responded(id, 'c1', usage(10, 0, 1)),
        calling(id, 'c2'),
        responded(id, 'c2', usage(20, 5, 2)),
        calling(id, 'c3', 'gpt-4.1-nano', 'tracker'),
        responded(id, 'c3', usage(30, 10, 3), 'tracker'),
        calling(id, 'c4'), // never answered (the provider failed, or the worker died)
      ],
    });
    const day = first.recordedAt.slice(0, 10);
    expect(await usageRows(t)).toEqual([
      row({ day, stream: s, session: s, model: 'gpt-4.1-mini', runtime: 'narrator/narrator' }, 2, usage(30, 5, 3)),
      row({ day, stream: s, session: s, model: 'gpt-4.1-nano', runtime: 'narrator/tracker' }, 1, usage(30, 10, 3)),
    ]);
  });

  it('a call counts once: a second answer of it, or the same events applied again, add nothing; an answer of no recorded call adds nothing', async () => {
    const id = uniqueIds();
    const [t, s] = [id('t'), id('s')];
    const appended = await spec.append(
      { tenant: t, stream: s, events: [calling(id, 'c1')] },
      { tenant: t, stream: s, events: [responded(id, 'c1', usage(10, 2, 1))] },
      { tenant: t, stream: s, events: [responded(id, 'c1', usage(99, 0, 9)), responded(id, 'ghost', usage(5, 0, 5))] },
    );
    const day = appended[1].recordedAt.slice(0, 10);
    const once = [row({ day, stream: s, session: s, model: 'gpt-4.1-mini', runtime: 'narrator/narrator' }, 1, usage(10, 2, 1))];
    expect(await usageRows(t)).toEqual(once);
    await spec.reapply(appended);
    await spec.reapply(appended.slice(1));
    expect(await usageRows(t)).toEqual(once);
  });

  it('a failed execution’s answered calls count (they were paid for), and a retry’s new call counts apart; its unanswered call counts nothing', async () => {
    const id = uniqueIds();
    const [t, s] = [id('t'), id('s')];
    const failed: NewEvent = {
      type: 'execution.failed@1',
      data: { executionId: id('e'), turnId: id('u'), attempt: 1, error: { code: 'PROVIDER_ERROR', message: 'x' }, discarded: true },
    };
    const [first] = await spec.append(
      { tenant: t, stream: s, events: [calling(id, 'c1'), responded(id, 'c1', usage(10, 0, 1)), calling(id, 'c2')] },
      { tenant: t, stream: s, events: [failed] },
      { tenant: t, stream: s, events: [calling(id, 'c3'), responded(id, 'c3', usage(20, 0, 2))] },
    );
    const day = first.recordedAt.slice(0, 10);
    expect(await usageRows(t)).toEqual([row({ day, stream: s, session: s, model: 'gpt-4.1-mini', runtime: 'narrator/narrator' }, 2, usage(30, 0, 3))]);
  });

  it('compaction summaries count under compaction:<plugin>; world generation under world-generation, with no session', async () => {
    const id = uniqueIds();
    const [t, s, job] = [id('t'), id('s'), id('job')];
    const appended = await spec.append(
      { tenant: t, stream: s, events: [summaryRequested(id, 'r1')] },
      { tenant: t, stream: s, events: [summaryResponded(id, 'r1', usage(500, 100, 50))] },
      { tenant: t, stream: job, events: [generationRequested(id, 'g1'), generationResponded(id, 'g1', usage(800, 0, 400))] },
    );
    const day = (n: number) => appended[n].recordedAt.slice(0, 10);
    const rows = await usageRows(t);
    expect(rows).toEqual(
      expect.arrayContaining([
        row({ day: day(1), stream: s, session: s, model: 'gpt-4.1-nano', runtime: 'compaction:history-compaction' }, 1, usage(500, 100, 50)),
        row({ day: day(3), stream: job, session: null, model: 'gpt-4.1-mini', runtime: 'world-generation' }, 1, usage(800, 0, 400)),
      ]),
    );
    expect(rows).toHaveLength(2);
  });

  it("each row is its own tenant's: two tenants' calls never share a row", async () => {
    const id = uniqueIds();
    const [a, b, sa, sb] = [id('ta'), id('tb'), id('sa'), id('sb')];
    await spec.append(
      { tenant: a, stream: sa, events: [calling(id, 'ca'), responded(id, 'ca', usage(1, 0, 1))] },
      { tenant: b, stream: sb, events: [calling(id, 'cb'), responded(id, 'cb', usage(2, 0, 2))] },
    );
    expect((await usageRows(a)).map((r) => [r.stream_id, r.input])).toEqual([[sa, 1]]);
    expect((await usageRows(b)).map((r) => [r.stream_id, r.input])).toEqual([[sb, 2]]);
  });
});
