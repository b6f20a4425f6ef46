import { type KyselyPlugin, sql, type Transaction } from 'kysely';
import type { Database, StoredEvent } from '../events';
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
    model: 'gpt',
    provider_output_tokens: at.cached === undefined ? null : 5,
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

  it("an agent loop's later steps (several calls of one runtime in a turn) are not compared; the next turn compares with the first step", async () => {
    const id = uniqueIds();
    const [t, s] = [id('t'), id('s')];
    const step = <T extends ReturnType<typeof calling>>(c: T, n: number) => ({ ...c, data: { ...c.data, step: n } });
    const stepped = (c: ReturnType<typeof responded>, n: number) => ({ ...c, data: { ...c.data, step: n, reply: '{"text":"","toolCalls":[]}' } });
    const first = step(calling(id('c1'), id('u1'), 'keeper', body('books')), 1);
    const loop = step(calling(id('c2'), id('u1'), 'keeper', body('books', 'tool result')), 2);
    const next = step(calling(id('c3'), id('u2'), 'keeper', body('books', 'more')), 1);
    const nextLoop = step(calling(id('c4'), id('u2'), 'keeper', body('books', 'more', 'tool result')), 2);
    await spec.check({
      when: [
        {
          tenant: t,
          stream: s,
          events: [first, stepped(responded(id('c1'), id('u1'), 'keeper', 0), 1), loop, stepped(responded(id('c2'), id('u1'), 'keeper', 30), 2)],
        },
        { tenant: t, stream: s, events: [next, nextLoop] },
      ],
      then: ({ position }) => ({
        prefix_reports: [
          report(first, { tenant: t, session: s, turn: 1, position: position(0), firstInTurn: true, cached: 0 }),
          report(loop, { tenant: t, session: s, turn: 1, position: position(2), firstInTurn: false, cached: 30 }),
          report(next, { tenant: t, session: s, turn: 2, position: position(4), firstInTurn: true, compared: first.data.body }),
          report(nextLoop, { tenant: t, session: s, turn: 2, position: position(5), firstInTurn: false }),
        ],
      }),
    });
  });

  it.each([
    ['one batch per turn', [1, 1, 1, 1, 1]],
    ['all in one batch', [5]],
    ['the replaced turn in the batch of its regeneration', [1, 3, 1]],
    ['a regeneration of a regeneration in one batch', [1, 1, 2, 1]],
  ])(
    "a regenerated turn (retryFromTurnId) takes the replaced turn's number and is compared with the turn before it, not the replaced one (%s)",
    async (_how, batches) => {
      const id = uniqueIds();
      const [t, s] = [id('t'), id('s')];
      const regenerated = (c: ReturnType<typeof calling>, replaced: string) => ({ ...c, data: { ...c.data, retryFromTurnId: replaced } });
      const first = calling(id('c1'), id('u1'), 'story', body('look around'));
      const second = calling(id('c2'), id('u2'), 'story', body('look around', 'A river.', 'swim'));
      const retried = regenerated(calling(id('c3'), id('u3'), 'story', body('look around', 'swim')), id('u2'));
      const again = regenerated(calling(id('c4'), id('u4'), 'story', body('look around', 'swim!')), id('u3'));
      const next = calling(id('c5'), id('u5'), 'story', body('look around', 'swim!', 'Cold.', 'dive'));
      const turns = [[first], [second], [retried], [again], [next]];
      // one append call is one batch of the projection: apart, each turn is its own batch
      const positions: number[] = [];
      for (let from = 0, b = 0; b < batches.length; from += batches[b], b++) {
        const events = turns.slice(from, from + batches[b]).flat();
        positions.push(...(await spec.append({ tenant: t, stream: s, events })).map((e) => e.globalPosition));
      }
      const position = (n: number) => positions[n];
      expect(await spec.rows([s], ['prefix_reports'])).toEqual({
        prefix_reports: [
          report(first, { tenant: t, session: s, turn: 1, position: position(0), firstInTurn: true }),
          report(second, { tenant: t, session: s, turn: 2, position: position(1), firstInTurn: true, compared: first.data.body }),
          // both regenerations of turn 2 are turn 2, compared with turn 1
          report(retried, { tenant: t, session: s, turn: 2, position: position(2), firstInTurn: true, compared: first.data.body }),
          report(again, { tenant: t, session: s, turn: 2, position: position(3), firstInTurn: true, compared: first.data.body }),
          // the next turn is 3, compared with the latest request of the runtime
          report(next, { tenant: t, session: s, turn: 3, position: position(4), firstInTurn: true, compared: again.data.body }),
        ],
      });
    },
  );

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

describe('prefix_reports: the latest request of a runtime, kept by the process', () => {
  it('is not read back by the next batch (its body comes back null), only while it is the latest row: a replay of later turns reads the body of the latest row and writes the same rows', async () => {
    const id = uniqueIds();
    const [t, s] = [id('t'), id('s')];
    const turns = [body('a'), body('a', 'b'), body('a', 'b', 'c 🌊')].map((b, i) => calling(id(`c${i}`), id(`u${i}`), 'story', b));
    const { log, rows } = await spec.check({
      when: turns.map((c) => ({ tenant: t, stream: s, events: [c] })),
      then: ({ position }) => ({
        prefix_reports: turns.map((c, i) =>
          report(c, { tenant: t, session: s, turn: i + 1, position: position(i), firstInTurn: true, ...(i > 0 ? { compared: turns[i - 1].data.body } : {}) }),
        ),
      }),
    });
    /** Each batch applied alone; per batch, the bodies of the latest rows the state's read gave back. */
    const bodiesRead = async (batches: StoredEvent[][]) => {
      const read: (string | null)[][] = [];
      const recording: KyselyPlugin = {
        transformQuery: (args) => args.node,
        transformResult: async (args) => {
          const row = args.result.rows[0] as { previous?: { body: string | null }[] } | undefined;
          if (row?.previous) read.push(row.previous.map((p) => p.body));
          return args.result;
        },
      };
      for (const batch of batches)
        await spec.db
          .withPlugin(recording)
          .transaction()
          .execute((trx) => prefixReportsProjection.applyBatch(trx, batch));
      return read;
    };
    // the second and third turns again (a replay of them): the process planned the third last, but the
    // first's row is the latest, so its body is read; then the second is the latest and is not
    await sql`delete from prefix_reports where session_id = ${s} and turn > 1`.execute(spec.db);
    expect(await bodiesRead(log.events.slice(1).map((e) => [e]))).toEqual([[turns[0].data.body], [null]]);
    expect(await spec.rows([s])).toEqual(rows);
  });
  it("two logs in one process (same tenant, session, runtime, call ids and positions, other bodies): one log's kept request is not taken for the other's", async () => {
    const [a, b] = [projectionSpec({ async: prefixReportsProjection }), projectionSpec({ async: prefixReportsProjection })];
    await Promise.all([a.start(), b.start()]);
    try {
      const [t, s] = ['t-two-logs', 's-two-logs'];
      const turn = (i: number, text: string) => ({ tenant: t, stream: s, events: [calling(`two-logs-c${i}`, `two-logs-u${i}`, 'story', text)] });
      const [b1, b2, b3] = [body('b'), body('b', 'b 2'), body('b', 'b 2', 'b 3 🌊')];
      // b's first two turns, then a's (the process now holds a's second request at the same call and position)
      await b.append(turn(0, b1), turn(1, b2));
      await a.append(turn(0, body('a')), turn(1, body('a', 'a 2, quite another text')));
      const [third] = await b.append(turn(2, b3));
      const [row] = (await b.rows([s])).prefix_reports.filter((r) => r.call_id === 'two-logs-c2');
      expect(row).toEqual(
        report(calling('two-logs-c2', 'two-logs-u2', 'story', b3), {
          tenant: t,
          session: s,
          turn: 3,
          position: third.globalPosition,
          firstInTurn: true,
          compared: b2,
        }),
      );
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
  }, 120_000);
});

describe('prefix_reports: a batch of many events', () => {
  it("in one batch, a turn's first request is compared with the previous turn's first of the same runtime from that batch", async () => {
    const id = uniqueIds();
    const [t, s] = [id('t'), id('s')];
    const story1 = calling(id('c1'), id('u1'), 'story', body('look around'));
    const tracker1 = calling(id('c2'), id('u1'), 'tracker', body('state'));
    const storyRetry = calling(id('c3'), id('u1'), 'story', body('look'));
    const story2 = calling(id('c4'), id('u2'), 'story', body('look around', 'walk to the river 🌊'));
    const tracker2 = calling(id('c5'), id('u2'), 'tracker', body('state', 'river'));
    await spec.check({
      // one append: the runner hands the projection all of them in one batch
      when: [{ tenant: t, stream: s, events: [story1, tracker1, storyRetry, responded(id('c1'), id('u1'), 'story', 7), story2, tracker2] }],
      then: ({ position }) => ({
        prefix_reports: [
          report(story1, { tenant: t, session: s, turn: 1, position: position(0), firstInTurn: true, cached: 7 }),
          report(tracker1, { tenant: t, session: s, turn: 1, position: position(1), firstInTurn: true }),
          report(storyRetry, { tenant: t, session: s, turn: 1, position: position(2), firstInTurn: false }),
          report(story2, { tenant: t, session: s, turn: 2, position: position(4), firstInTurn: true, compared: story1.data.body }),
          report(tracker2, { tenant: t, session: s, turn: 2, position: position(5), firstInTurn: true, compared: tracker1.data.body }),
        ],
      }),
    });
  });

  it('a report for a call of an earlier batch, for a call with no row, and before its call', async () => {
    const id = uniqueIds();
    const [t, s] = [id('t'), id('s')];
    const first = calling(id('c1'), id('u1'), 'story', body('a'));
    const late = calling(id('c2'), id('u2'), 'story', body('a', 'b'));
    await spec.check({
      given: [{ tenant: t, stream: s, events: [first] }],
      when: [
        {
          tenant: t,
          stream: s,
          events: [responded(id('c9'), id('u1'), 'story', 1), responded(id('c2'), id('u2'), 'story', 2), late, responded(id('c1'), id('u1'), 'story', 3)],
        },
      ],
      then: ({ position }) => ({
        prefix_reports: [
          report(first, { tenant: t, session: s, turn: 1, position: position(0), firstInTurn: true, cached: 3 }),
          // its report came before it in the log: applied one by one it matched no row
          report(late, { tenant: t, session: s, turn: 2, position: position(3), firstInTurn: true, compared: first.data.body }),
        ],
      }),
    });
  });

  /**
   * Events of two sessions interleaved: turns of two runtimes, a retry, a turn id seen again after
   * a later turn, reports before, with and after their calls, a report with no call, a repeated
   * call event and a second event with a call id that has a row (other turn: it must not count).
   */
  const scenario = () => {
    const id = uniqueIds();
    const [t, s1, s2] = [id('t'), id('s1'), id('s2')];
    const on = (stream: string, e: { type: 'llm.calling@1' | 'llm.responded@1'; data: object }) => ({ stream, e });
    const c1 = calling(id('c1'), id('u1'), 'story', body('look around'));
    const log = [
      on(s1, c1),
      on(s2, calling(id('d1'), id('v1'), 'story', body('hello'))),
      on(s1, calling(id('c2'), id('u1'), 'tracker', body('state'))),
      on(s1, responded(id('c1'), id('u1'), 'story', 5)),
      on(s1, calling(id('c3'), id('u1'), 'story', body('look'))),
      on(s2, responded(id('d1'), id('v1'), 'story', 1)),
      on(s1, responded(id('c4'), id('u2'), 'story', 9)),
      on(s1, calling(id('c4'), id('u2'), 'story', body('look around', 'walk 🌊'))),
      on(s2, calling(id('d2'), id('v2'), 'story', body('hello', 'again'))),
      on(s1, responded(id('c2'), id('u1'), 'tracker', 2)),
      on(s1, calling(id('c5'), id('u2'), 'tracker', body('state', 'walk'))),
      on(s1, c1),
      on(s2, calling(id('d3'), id('v1'), 'story', body('hello?'))),
      on(s2, responded(id('nope'), id('v9'), 'story', 4)),
      on(s1, calling(id('c1'), id('u9'), 'story', body('collides'))),
      on(s1, calling(id('c6'), id('u3'), 'story', body('look around', 'walk 🌊', 'swim'))),
      on(s2, calling(id('d4'), id('v3'), 'tracker', body('t'))),
      on(s1, responded(id('c6'), id('u3'), 'story', 11)),
      on(s1, calling(id('c7'), id('u3'), 'tracker', body('state', 'walk', 'swim'))),
      on(s2, calling(id('d5'), id('v3'), 'story', body('hello', 'again', 'and again'))),
      on(s2, responded(id('d5'), id('v3'), 'story', 6)),
      on(s1, responded(id('c6'), id('u3'), 'story', 12)),
    ];
    // positions of their own, far past the log's (the events are logged only inside `rowsAfter`'s rolled-back transaction)
    const base = (nextBase += 1_000);
    const events = log.map(
      ({ stream, e }, i) =>
        ({
          globalPosition: base + i,
          tenantId: t,
          streamId: stream,
          streamVersion: i + 1,
          ...e,
          metadata: {},
          recordedAt: '2025-01-01T00:00:00.000Z',
        }) as StoredEvent,
    );
    return { events, sessions: [s1, s2] };
  };

  let nextBase = 8_000_000_000_000_000;

  /** The events in the log at their positions (the write reads a call's body from its event there). */
  const logged = async (trx: Transaction<Database>, events: StoredEvent[]) => {
    const rows = [...new Map(events.map((e) => [e.globalPosition, e])).values()].map((e) => ({
      global_position: e.globalPosition,
      tenant_id: e.tenantId,
      stream_id: e.streamId,
      stream_version: e.streamVersion,
      type: e.type,
      data: e.data,
      recorded_at: e.recordedAt,
    }));
    await sql`insert into events (global_position, tenant_id, stream_id, stream_version, type, data, recorded_at) overriding system value
      select * from jsonb_to_recordset(${JSON.stringify(rows)}::jsonb)
        as r(global_position bigint, tenant_id text, stream_id text, stream_version int, type text, data jsonb, recorded_at timestamptz)`.execute(trx);
  };

  class RolledBack extends Error {}
  /** The rows the batches give, applied in order in one transaction (the events logged in it first) that is then rolled back. */
  const rowsAfter = async (sessions: string[], batches: StoredEvent[][]) => {
    let rows: unknown[] = [];
    await spec.db
      .transaction()
      .execute(async (trx) => {
        await logged(trx, batches.flat());
        for (const batch of batches) await prefixReportsProjection.applyBatch(trx, batch);
        rows = (await sql`select * from prefix_reports where session_id in (${sql.join(sessions)}) order by call_id`.execute(trx)).rows;
        throw new RolledBack();
      })
      .catch((e: unknown) => {
        if (!(e instanceof RolledBack)) throw e;
      });
    return rows;
  };
  const chunks = <T>(items: T[], size: number) => Array.from({ length: Math.ceil(items.length / size) }, (_, i) => items.slice(i * size, i * size + size));

  it('one batch, a batch split at any point, and batches of any size give the same rows', async () => {
    const { events, sessions } = scenario();
    const whole = await rowsAfter(sessions, [events]);
    expect(whole).toHaveLength(12);
    // the turn id seen again after a later turn keeps its number, and its runtime is not first
    expect(whole).toContainEqual(expect.objectContaining({ turn_id: expect.stringMatching(/^v1-/), turn: 1, first_in_turn: false, body: body('hello?') }));
    for (let at = 1; at < events.length; at++) expect(await rowsAfter(sessions, [events.slice(0, at), events.slice(at)])).toEqual(whole);
    for (const size of [1, 2, 3, 5, 7]) expect(await rowsAfter(sessions, chunks(events, size))).toEqual(whole);
  });

  it('a batch applied again (after a crash, before its checkpoint moved) changes no row', async () => {
    const { events: all, sessions } = scenario();
    // without the report that comes before its call: applied again, that one would find the row
    const events = all.filter((e) => !(e.type === 'llm.responded@1' && e.data.callId.startsWith('c4-')));
    const once = await rowsAfter(sessions, [events]);
    expect(await rowsAfter(sessions, [events, events])).toEqual(once);
    expect(await rowsAfter(sessions, [events.slice(0, 10), events.slice(5, 15), events.slice(10), events.slice(3, 12)])).toEqual(once);
    // and with it, the same rows as applying the events one by one, twice
    expect(await rowsAfter(sessions, [all, all])).toEqual(await rowsAfter(sessions, [...chunks(all, 1), ...chunks(all, 1)]));
  });

  it('a batch costs the same two statements however many events and sessions it holds', async () => {
    const statements = async (events: StoredEvent[]) => {
      let count = 0;
      const counting: KyselyPlugin = {
        transformQuery: (args) => args.node,
        transformResult: async (args) => {
          count += 1;
          return args.result;
        },
      };
      await spec.db
        .withPlugin(counting)
        .transaction()
        .execute((trx) => prefixReportsProjection.applyBatch(trx, events));
      return count;
    };
    // each batch below has calls to record and reports for calls of earlier batches (or of none):
    // one read, one write (issue 33: the update and the insert, two statements before, in one)
    const [first, second] = [scenario(), scenario()];
    expect(await statements(first.events.slice(0, 8))).toBe(2);
    expect(await statements(first.events.slice(8))).toBe(2);
    const wide = (nextBase += 1_000);
    const wider = [...second.events, ...scenario().events, ...scenario().events].map((e, i) => ({ ...e, globalPosition: wide + i }));
    expect(await statements(wider)).toBe(2);
  });
});
