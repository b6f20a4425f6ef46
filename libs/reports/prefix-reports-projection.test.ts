import { projectionSpec, uniqueIds } from '../../test/support/projection-spec';
import { comparePrefix } from './prefix-compare';
import { prefixReportsProjection } from './prefix-reports-projection';

const spec = projectionSpec({ async: prefixReportsProjection });
beforeAll(() => spec.start(), 120_000);
afterAll(() => spec.stop());

const SYSTEM = 'You are the narrator. 你是叙述者。';
const body = (...turns: string[]) =>
  JSON.stringify({ model: 'gpt', messages: [{ role: 'system', content: SYSTEM }, ...turns.map((content) => ({ role: 'user', content }))] });
const layout = { systemSections: [{ name: 'rules', length: SYSTEM.length }], messageSections: ['history'] };

const calling = (callId: string, turnId: string, runtimeId: string, requestBody: string) => ({
  type: 'llm.calling@1' as const,
  data: { executionId: `${turnId}-e`, turnId, attempt: 1, callId, pluginId: 'p', runtimeId, provider: 'openai', model: 'gpt', body: requestBody, layout },
});
const responded = (callId: string, turnId: string, runtimeId: string, cachedInputTokens: number) => ({
  type: 'llm.responded@1' as const,
  data: {
    executionId: `${turnId}-e`,
    turnId,
    callId,
    pluginId: 'p',
    runtimeId,
    finishReason: 'stop',
    usage: { inputTokens: 40, outputTokens: 5, cachedInputTokens },
  },
});

const openai = (b: string) => ({ protocol: 'openai', body: JSON.parse(b) as Record<string, unknown>, layout });

/** A prefix_reports row as the projection writes it; `compared` is the previous first request of the runtime. */
const report = (
  c: ReturnType<typeof calling>,
  at: { tenant: string; session: string; turn: number; position: number; firstInTurn: boolean; compared?: string; cached?: number },
) => {
  const figures = at.compared ? comparePrefix(openai(at.compared), openai(c.data.body)) : null;
  return {
    call_id: c.data.callId,
    tenant_id: at.tenant,
    session_id: at.session,
    turn_id: c.data.turnId,
    turn: at.turn,
    runtime: `p/${c.data.runtimeId}`,
    position: at.position,
    first_in_turn: at.firstInTurn,
    protocol: 'openai',
    body: c.data.body,
    layout,
    request_tokens: comparePrefix(openai(c.data.body), openai(c.data.body)).requestTokens,
    shared_tokens: figures?.sharedTokens ?? null,
    shared_percent: figures?.sharedPercent ?? null,
    first_difference: figures?.firstDifference ?? null,
    provider_cached_tokens: at.cached ?? null,
    provider_input_tokens: at.cached === undefined ? null : 40,
  };
};

describe('prefix_reports (async projection)', () => {
  it("a turn's first request of a runtime is compared with the previous turn's; later ones of the turn and a new runtime are not", async () => {
    const id = uniqueIds();
    const [t, s] = [id('t'), id('s')];
    const first = calling(id('c1'), id('u1'), 'story', body('look around'));
    const second = calling(id('c2'), id('u2'), 'story', body('look around', 'walk to the river 🌊'));
    const retry = calling(id('c3'), id('u2'), 'story', body('look around', 'walk'));
    const tracker = calling(id('c4'), id('u2'), 'tracker', body('state'));
    const { rows } = await spec.check({
      given: [{ tenant: t, stream: s, events: [first, responded(id('c1'), id('u1'), 'story', 0)] }],
      when: [
        { tenant: t, stream: s, events: [second] },
        { tenant: t, stream: s, events: [responded(id('c2'), id('u2'), 'story', 32)] },
        { tenant: t, stream: s, events: [retry] },
        { tenant: t, stream: s, events: [tracker] },
      ],
      then: ({ position }) => ({
        prefix_reports: [
          report(first, { tenant: t, session: s, turn: 1, position: position(0), firstInTurn: true, cached: 0 }),
          report(second, { tenant: t, session: s, turn: 2, position: position(2), firstInTurn: true, compared: first.data.body, cached: 32 }),
          report(retry, { tenant: t, session: s, turn: 2, position: position(4), firstInTurn: false }),
          report(tracker, { tenant: t, session: s, turn: 2, position: position(5), firstInTurn: true }),
        ],
      }),
    });
    // the comparison found the new message: everything before it is shared
    expect(rows.prefix_reports[1]).toMatchObject({ shared_percent: 100, first_difference: expect.objectContaining({ messageIndex: 2 }) });
  });

  it('rows carry their tenant; another tenant reads none of them', async () => {
    const [mine, theirs] = [uniqueIds(), uniqueIds()];
    const [a, b] = [calling(mine('c'), mine('u'), 'story', body('a')), calling(theirs('c'), theirs('u'), 'story', body('b'))];
    await spec.check({
      when: [
        { tenant: mine('t'), stream: mine('s'), events: [a] },
        { tenant: theirs('t'), stream: theirs('s'), events: [b] },
      ],
      then: ({ position }) => ({
        prefix_reports: [
          report(a, { tenant: mine('t'), session: mine('s'), turn: 1, position: position(0), firstInTurn: true }),
          report(b, { tenant: theirs('t'), session: theirs('s'), turn: 1, position: position(1), firstInTurn: true }),
        ].sort((x, y) => (x.session_id < y.session_id ? -1 : 1)),
      }),
    });
    expect((await spec.readModels.prefixReport(mine('t'), mine('s'))).map((r) => r.callId)).toEqual([mine('c')]);
    expect(await spec.readModels.prefixReport(theirs('t'), mine('s'))).toEqual([]);
    expect(await spec.readModels.prefixReport(mine('t'), theirs('s'))).toEqual([]);
  });

  it('applying the same events again gives the same rows (one row per call)', async () => {
    const id = uniqueIds();
    const [t, s] = [id('t'), id('s')];
    const { log, rows } = await spec.check({
      when: [
        { tenant: t, stream: s, events: [calling(id('c1'), id('u1'), 'story', body('a')), responded(id('c1'), id('u1'), 'story', 3)] },
        { tenant: t, stream: s, events: [calling(id('c2'), id('u2'), 'story', body('a', 'b'))] },
      ],
      then: { prefix_reports: [expect.objectContaining({ turn: 1 }), expect.objectContaining({ turn: 2, first_in_turn: true })] },
    });
    await spec.reapply(log.events);
    expect(await spec.rows([s])).toEqual(rows);
  });
});
