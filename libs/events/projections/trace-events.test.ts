import { type PluginTransformQueryArgs, type PluginTransformResultArgs, sql } from 'kysely';
import { projectionSpec, uniqueIds } from '../../../test/support/projection-spec';
import type { NewEvent } from '../event-types';
import { traceEventsProjection } from './trace-events';
import { QueryCounter } from '../../../test/support/query-counter';

const spec = projectionSpec({ async: traceEventsProjection });
beforeAll(() => spec.start(), 120_000);
afterAll(() => spec.stop());

const ids = (id: (n: string) => string) => ({ executionId: id('e'), turnId: id('u'), callId: id('c'), pluginId: 'narrator', runtimeId: 'story' });
const calling = (id: (n: string) => string, body: string) => ({
  type: 'llm.calling@1' as const,
  data: { ...ids(id), attempt: 1, provider: 'openai', model: 'gpt', body },
});
const responded = (id: (n: string) => string) => ({
  type: 'llm.responded@1' as const,
  data: { ...ids(id), finishReason: 'stop', usage: { inputTokens: 12, outputTokens: 3, cachedInputTokens: 8 } },
});
const input = (id: (n: string) => string): NewEvent => ({
  type: 'player-input.submitted@1',
  data: { executionId: id('e'), turnId: id('u'), messageId: id('m'), text: 'hi' },
});

/** A trace_events row as the projection writes it. */
const trace = (
  event: ReturnType<typeof calling> | ReturnType<typeof responded>,
  at: { tenant: string; session: string; position: number; recordedAt: Date },
) => ({
  global_position: at.position,
  tenant_id: at.tenant,
  session_id: at.session,
  execution_id: event.data.executionId,
  turn_id: event.data.turnId,
  type: event.type,
  call_id: event.data.callId,
  plugin_id: event.data.pluginId,
  runtime_id: event.data.runtimeId,
  data: event.data,
  recorded_at: at.recordedAt,
});

describe('trace_events (async projection)', () => {
  it('given an input, when a call is made and answered, then both are traced with the exact request body; other events are not', async () => {
    const id = uniqueIds();
    const [t, s] = [id('t'), id('s')];
    // key order and spacing of the body are the wire's: kept as text
    const body = '{"model":"gpt",  "messages":[{"role":"user","content":"hi"}],"a":1}';
    const [c, r] = [calling(id, body), responded(id)];
    await spec.check({
      given: [{ tenant: t, stream: s, events: [input(id)] }],
      when: [
        { tenant: t, stream: s, events: [c] },
        { tenant: t, stream: s, events: [r] },
      ],
      then: ({ at, position }) => ({
        trace_events: [
          trace(c, { tenant: t, session: s, position: position(1), recordedAt: at(1) }),
          trace(r, { tenant: t, session: s, position: position(2), recordedAt: at(2) }),
        ],
      }),
    });
    expect((await spec.readModels.llmCalls(t, s)).map((x) => x.requestText)).toEqual([body]);
  });

  it('a body with emoji, ZWJ, CJK and RTL text is stored unchanged', async () => {
    const id = uniqueIds();
    const [t, s] = [id('t'), id('s')];
    const body = JSON.stringify({ messages: [{ role: 'user', content: '😀👩‍👩‍👧‍👦 你好 مرحبا שלום e\u0301 𠀀' }] });
    const c = calling(id, body);
    await spec.check({
      when: [{ tenant: t, stream: s, events: [c] }],
      then: ({ at, position }) => ({ trace_events: [trace(c, { tenant: t, session: s, position: position(0), recordedAt: at(0) })] }),
    });
    expect((await spec.readModels.llmCalls(t, s))[0].requestText).toBe(body);
  });

  it('rows carry their tenant; another tenant reads none of them', async () => {
    const mine = uniqueIds();
    const theirs = uniqueIds();
    const [c1, c2] = [calling(mine, '{"n":1}'), calling(theirs, '{"n":2}')];
    await spec.check({
      when: [
        { tenant: mine('t'), stream: mine('s'), events: [c1] },
        { tenant: theirs('t'), stream: theirs('s'), events: [c2] },
      ],
      then: ({ at, position }) => ({
        trace_events: [
          trace(c1, { tenant: mine('t'), session: mine('s'), position: position(0), recordedAt: at(0) }),
          trace(c2, { tenant: theirs('t'), session: theirs('s'), position: position(1), recordedAt: at(1) }),
        ],
      }),
    });
    expect(await spec.readModels.llmCalls(theirs('t'), mine('s'))).toEqual([]);
    expect(await spec.readModels.llmCalls(mine('t'), theirs('s'))).toEqual([]);
  });

  it('a batch is one statement whatever its size (500 rows at most in one); its rows are those of its events applied one by one', async () => {
    const id = uniqueIds();
    const [t, s] = [id('t'), id('s')];
    const call = (k: number) => {
      const ofCall = (n: string) => id(`${n}${k}`);
      return [calling(ofCall, JSON.stringify({ k, text: `😀 ${k} שלום "q" \\ e\u0301` })), responded(ofCall)];
    };
    await spec.store.append({ tenantId: t, streamId: s, expectedVersion: 0, events: [input(id), ...[0, 1, 2].flatMap(call)] });
    const traced = (await spec.store.readStream(s)).filter((e) => traceEventsProjection.handles.includes(e.type));
    expect(traced).toHaveLength(6);
    const counter = new QueryCounter();
    const counted = spec.db.withPlugin(counter);
    await counted.transaction().execute((trx) => traceEventsProjection.applyBatch(trx, traced));
    expect(counter.queries).toBe(1); // before: one a row
    const batched = await spec.rows([s]);
    expect(batched.trace_events).toHaveLength(6);
    // one by one, as the projector applies a batch that failed: the same rows
    await spec.db.deleteFrom('trace_events').where('session_id', '=', s).execute();
    for (const event of traced) await spec.db.transaction().execute((trx) => traceEventsProjection.applyBatch(trx, [event]));
    expect(await spec.rows([s])).toEqual(batched);
    expect(batched.trace_events[0]).toEqual(
      trace(traced[0] as ReturnType<typeof calling>, { tenant: t, session: s, position: traced[0].globalPosition, recordedAt: new Date(traced[0].recordedAt) }),
    );

    // a batch of 1,002: three statements (500, 500, 2)
    const [t2, s2] = [id('t2'), id('s2')];
    await spec.store.append({ tenantId: t2, streamId: s2, expectedVersion: 0, events: Array.from({ length: 501 }, (_, k) => call(k)).flat() });
    const many = await spec.store.readStream(s2);
    counter.queries = 0;
    await counted.transaction().execute((trx) => traceEventsProjection.applyBatch(trx, many));
    expect(counter.queries).toBe(3);
    expect((await spec.rows([s2])).trace_events.map((r) => Number(r.global_position))).toEqual(many.map((e) => e.globalPosition));
  });

  it("a row's data is its event's as the log holds it, read by the statement: the request body is not sent again", async () => {
    const id = uniqueIds();
    const [t, s] = [id('t'), id('s')];
    const body = JSON.stringify({ messages: [{ role: 'user', content: 'the body 😀 "q" \\ שלום' }] });
    await spec.store.append({ tenantId: t, streamId: s, expectedVersion: 0, events: [calling(id, body), responded(id)] });
    const traced = await spec.store.readStream(s);
    const sent: unknown[] = [];
    const recording = spec.db.withPlugin({
      transformQuery: ({ node, queryId }: PluginTransformQueryArgs) => {
        sent.push(...spec.db.getExecutor().compileQuery(node, queryId).parameters);
        return node;
      },
      transformResult: ({ result }: PluginTransformResultArgs) => Promise.resolve(result),
    });
    await recording.transaction().execute((trx) => traceEventsProjection.applyBatch(trx, traced));
    expect(JSON.stringify(sent)).not.toContain('the body');
    const rows = (await spec.rows([s])).trace_events;
    expect(rows.map((r) => r.data)).toEqual(traced.map((e) => e.data));
    // the same jsonb as the log's row, byte for byte in its text form
    const texts = await spec.db
      .selectFrom('trace_events as tr')
      .innerJoin('events as e', 'e.global_position', 'tr.global_position')
      .select((eb) => [sql<string>`${eb.ref('tr.data')}::text`.as('traced'), sql<string>`${eb.ref('e.data')}::text`.as('logged')])
      .where('tr.session_id', '=', s)
      .execute();
    expect(texts).toHaveLength(2);
    for (const r of texts) expect(r.traced).toBe(r.logged);
  });

  // the log row a trace row's data is read from is the one at its position of its own tenant and
  // stream: a row at an event's position but of another tenant, or of another stream, matches no log
  // row and is not written (nor given that event's data)
  it.each([
    ['tenant', (id: (n: string) => string) => ({ tenantId: id('t2') })],
    ['stream (session)', (id: (n: string) => string) => ({ streamId: id('s2') })],
  ])("a row at an event's position but of another %s is not written", async (_, other) => {
    const id = uniqueIds();
    const [t, s] = [id('t'), id('s')];
    await spec.store.append({ tenantId: t, streamId: s, expectedVersion: 0, events: [calling(id, '{"n":1}'), calling(id, '{"n":2}')] });
    const [first, second] = await spec.store.readStream(s);
    await spec.db.transaction().execute((trx) => traceEventsProjection.applyBatch(trx, [first, { ...second, ...other(id) }]));
    const written = await spec.db
      .selectFrom('trace_events')
      .select(['global_position', 'tenant_id', 'session_id'])
      .where('global_position', 'in', [String(first.globalPosition), String(second.globalPosition)])
      .execute();
    expect(written.map((r) => [Number(r.global_position), r.tenant_id, r.session_id])).toEqual([[first.globalPosition, t, s]]);
  });

  it('applying the same events again gives the same rows (one row per global position)', async () => {
    const id = uniqueIds();
    const [t, s] = [id('t'), id('s')];
    const { log, rows } = await spec.check({
      when: [{ tenant: t, stream: s, events: [calling(id, '{}'), responded(id)] }],
      then: { trace_events: [expect.objectContaining({ type: 'llm.calling@1' }), expect.objectContaining({ type: 'llm.responded@1' })] },
    });
    await spec.reapply(log.events);
    expect(await spec.rows([s])).toEqual(rows);
  });
});
