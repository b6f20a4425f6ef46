import { projectionSpec, uniqueIds } from '../../../test/support/projection-spec';
import { CompactionPrefixMismatchError, SupersededTurnNotLatestError } from '../errors';
import { type CommittedMessage, type NewEvent, openingMessage } from '../event-types';
import { turnMessagesProjection } from './turn-messages';
import { EventStore } from '../event-store';
import { ReadModels } from '../read-models';
import { QueryCounter } from '../../../test/support/query-counter';

const spec = projectionSpec({ inline: turnMessagesProjection });
beforeAll(() => spec.start(), 120_000);
afterAll(() => spec.stop());

const player = (messageId: string, text: string): CommittedMessage => ({
  messageId,
  role: 'user',
  sourceType: 'player',
  pluginId: null,
  runtimeId: null,
  outputKind: null,
  text,
});
const story = (messageId: string, text: string): CommittedMessage => ({
  messageId,
  role: 'assistant',
  sourceType: 'runtime',
  pluginId: 'narrator',
  runtimeId: 'story',
  outputKind: 'story',
  text,
});
const committed = (executionId: string, turnId: string, ...messages: CommittedMessage[]): NewEvent => ({
  type: 'turn.committed@1',
  data: { executionId, turnId, attempt: 1, messages },
});
const compacted = (summaryId: string, messageIds: string[]): NewEvent => ({
  type: 'history.compacted@1',
  data: { compactionId: `${summaryId}-c`, summaries: [{ summaryId, messageIds, replacesSummaryIds: [], content: 'summary' }] },
});

const created = (sessionId: string): NewEvent => ({ type: 'session.created@1', data: { sessionId, worldId: 'emberback', locale: 'en' } });
const opened = (turnId: string, messageId: string, text: string): NewEvent => ({
  type: 'session.opened@1',
  data: { turnId, messageId, openingIndex: 0, text },
});

const superseded = (
  turnId: string,
  by: { turnId: string; executionId: string },
  cause: 'retry' | 'select',
  messages?: CommittedMessage[],
  alternativeOf = turnId,
): NewEvent => ({
  type: 'turn.superseded@1',
  data: { alternativeOf, turnId, byTurnId: by.turnId, byExecutionId: by.executionId, cause, ...(messages ? { messages } : {}) },
});
/** A player's input; `retry`: a regeneration of the turn `from` in the group `root`. */
const input = (executionId: string, turnId: string, retry?: { from: string; root: string }): NewEvent => ({
  type: 'player-input.submitted@1',
  data: {
    executionId,
    turnId,
    messageId: `${turnId}-input`,
    text: 'x',
    ...(retry ? { retryFromTurnId: retry.from, alternativeOf: retry.root, isolated: true as const } : {}),
  },
});

/** A turn_messages row as the projection writes it. */
const message = (
  m: CommittedMessage,
  at: { tenant: string; session: string; turn: string; execution: string; ord: number; committedAt: Date; compacted?: boolean },
) => ({
  message_id: m.messageId,
  tenant_id: at.tenant,
  session_id: at.session,
  turn_id: at.turn,
  execution_id: at.execution,
  ord: at.ord,
  role: m.role,
  source_type: m.sourceType,
  plugin_id: m.pluginId,
  runtime_id: m.runtimeId,
  output_kind: m.outputKind,
  text: m.text,
  compacted: at.compacted ?? false,
  committed_at: at.committedAt,
  media: m.media ?? null,
});

describe('turn_messages (inline projection)', () => {
  it('given a committed turn, when the next commits, then its messages follow in order (ord goes on)', async () => {
    const id = uniqueIds();
    const [t, s] = [id('t'), id('s')];
    const m = [player(id('m1'), 'look'), story(id('m2'), 'A river.'), player(id('m3'), 'swim'), story(id('m4'), 'Cold.')];
    await spec.check({
      given: [{ tenant: t, stream: s, events: [committed(id('e1'), id('u1'), m[0], m[1])] }],
      when: [{ tenant: t, stream: s, events: [committed(id('e2'), id('u2'), m[2], m[3])] }],
      then: ({ at }) => ({
        turn_messages: [
          message(m[0], { tenant: t, session: s, turn: id('u1'), execution: id('e1'), ord: 1, committedAt: at(0) }),
          message(m[1], { tenant: t, session: s, turn: id('u1'), execution: id('e1'), ord: 2, committedAt: at(0) }),
          message(m[2], { tenant: t, session: s, turn: id('u2'), execution: id('e2'), ord: 3, committedAt: at(1) }),
          message(m[3], { tenant: t, session: s, turn: id('u2'), execution: id('e2'), ord: 4, committedAt: at(1) }),
        ],
        // the session's row counts its committed turns (no compaction yet)
        history_watermarks: [{ session_id: s, tenant_id: t, compacted_through: 0, turns: 2 }],
      }),
    });
  });

  it('a commit writes its messages and counts its turn in the append’s own statement', async () => {
    const id = uniqueIds();
    const [t, s] = [id('t'), id('s')];
    await spec.append({ tenant: t, stream: s, events: [committed(id('e1'), id('u1'), player(id('m1'), 'look'), story(id('m2'), 'A river.'))] });
    const counter = new QueryCounter();
    const store = new EventStore(spec.db.withPlugin(counter), { inline: [turnMessagesProjection] });
    await store.append({
      tenantId: t,
      streamId: s,
      expectedVersion: 1,
      events: [committed(id('e2'), id('u2'), player(id('m3'), 'swim'), story(id('m4'), 'Cold.'))],
    });
    // the append (lock, version check, insert) with the rows and the watermark (was two statements)
    expect(counter.queries).toBe(1);
    expect((await spec.rows([s], ['turn_messages'])).turn_messages?.map((r) => [r.message_id, r.ord])).toEqual([
      [id('m1'), 1],
      [id('m2'), 2],
      [id('m3'), 3],
      [id('m4'), 4],
    ]);
    expect((await spec.rows([s], ['history_watermarks'])).history_watermarks).toEqual([{ session_id: s, tenant_id: t, compacted_through: 0, turns: 2 }]);
  });

  it('the history view (statistics, uncompacted rows, scan tail, bound) is one statement', async () => {
    const id = uniqueIds();
    const [t, s] = [id('t'), id('s')];
    const m = [1, 2, 3, 4, 5, 6].map((n) => (n % 2 ? player(id(`m${n}`), `p${n}`) : story(id(`m${n}`), `s${n}`)));
    await spec.append(
      { tenant: t, stream: s, events: [committed(id('e1'), id('u1'), m[0], m[1])] },
      { tenant: t, stream: s, events: [committed(id('e2'), id('u2'), m[2], m[3])] },
      { tenant: t, stream: s, events: [committed(id('e3'), id('u3'), m[4], m[5])] },
      { tenant: t, stream: s, events: [compacted(id('sum'), [id('m1'), id('m2')])] },
    );
    const counter = new QueryCounter();
    const readModels = new ReadModels(spec.db.withPlugin(counter));
    const view = await readModels.historyView(t, s, { bound: 100, scan: 3 });
    expect(counter.queries).toBe(1);
    expect(view.stats).toEqual({ total: 6, compacted: 2, uncompacted: 4, turns: 3 });
    expect(view.uncompacted.map((r) => [r.order, r.text])).toEqual([
      [3, 'p3'],
      [4, 's4'],
      [5, 'p5'],
      [6, 's6'],
    ]);
    expect(view.scanTail.map((r) => r.order)).toEqual([4, 5, 6]);
    // a scan range reaching into the compacted prefix reads it too (only for the scan tail)
    const wide = await readModels.historyView(t, s, { bound: 100, scan: 5 });
    expect([wide.uncompacted.map((r) => r.order), wide.scanTail.map((r) => r.order)]).toEqual([
      [3, 4, 5, 6],
      [2, 3, 4, 5, 6],
    ]);
    expect(await readModels.historyView(t, s, { bound: 3, scan: 3 })).toEqual({
      uncompacted: [],
      scanTail: [],
      stats: { total: 6, compacted: 2, uncompacted: 4, turns: 3 },
      overBound: true,
    });
    // another tenant reads no rows of it
    expect((await readModels.historyView('other', s, { bound: 100, scan: 3 })).uncompacted).toEqual([]);
    // an unknown session: nothing
    expect(await readModels.historyView(t, id('none'), { bound: 100, scan: 3 })).toEqual({
      uncompacted: [],
      scanTail: [],
      stats: { total: 0, compacted: 0, uncompacted: 0, turns: 0 },
      overBound: false,
    });
  });

  it('a compaction marks exactly the uncompacted prefix it names and moves the watermark to its last message; the next goes on from there', async () => {
    const id = uniqueIds();
    const [t, s] = [id('t'), id('s')];
    const m = [player(id('m1'), 'a'), story(id('m2'), 'b'), player(id('m3'), 'c'), story(id('m4'), 'd')];
    await spec.check({
      given: [{ tenant: t, stream: s, events: [committed(id('e1'), id('u1'), m[0], m[1]), committed(id('e2'), id('u2'), m[2], m[3])] }],
      when: [
        { tenant: t, stream: s, events: [compacted(id('sum1'), [id('m1'), id('m2')])] },
        // no messages (a merge of summaries only): no mark changes
        { tenant: t, stream: s, events: [compacted(id('sum2'), [])] },
        { tenant: t, stream: s, events: [compacted(id('sum3'), [id('m3')])] },
      ],
      then: ({ at }) => ({
        turn_messages: [
          message(m[0], { tenant: t, session: s, turn: id('u1'), execution: id('e1'), ord: 1, committedAt: at(0), compacted: true }),
          message(m[1], { tenant: t, session: s, turn: id('u1'), execution: id('e1'), ord: 2, committedAt: at(0), compacted: true }),
          message(m[2], { tenant: t, session: s, turn: id('u2'), execution: id('e2'), ord: 3, committedAt: at(1), compacted: true }),
          message(m[3], { tenant: t, session: s, turn: id('u2'), execution: id('e2'), ord: 4, committedAt: at(1) }),
        ],
        history_watermarks: [{ session_id: s, tenant_id: t, compacted_through: 3, turns: 2 }],
      }),
    });
    expect(await spec.readModels.uncompactedPrefix(t, s, 10)).toEqual([id('m4')]);
    expect(await spec.readModels.uncompactedPrefix(id('other-tenant'), s, 10)).toEqual([]);
  });

  it.each([
    ['reordered (as a history transform may show them)', ['m2', 'm1']],
    ['not adjacent (a message skipped)', ['m1', 'm3']],
    ['not from the oldest uncompacted message', ['m2']],
    ['named twice', ['m1', 'm1']],
    ['another session`s message', ['m1', 'elsewhere']],
    ['compacted already', ['m1']],
    ['more than the history holds', ['m3', 'm4', 'm5']],
  ])(
    'safeguard: new messages %s are refused in the append`s transaction (COMPACTION_PREFIX_MISMATCH, conflict): no event, no row changes',
    async (_what, names) => {
      const id = uniqueIds();
      const [t, s] = [id('t'), id('s')];
      const turn = committed(id('e1'), id('u1'), player(id('m1'), 'a'), story(id('m2'), 'b'), player(id('m3'), 'c'), story(id('m4'), 'd'));
      const other = committed(id('e9'), id('u9'), player(id('elsewhere'), 'x'));
      await spec.append({ tenant: t, stream: id('other'), events: [other] }, { tenant: t, stream: s, events: [turn] });
      const alreadyCompacted = names[0] === 'm1' && names.length === 1;
      if (alreadyCompacted || names[0] === 'm3') await spec.append({ tenant: t, stream: s, events: [compacted(id('first'), [id('m1'), id('m2')])] });
      const before = await spec.rows([s]);
      const version = await spec.store.streamVersion(s);
      const failure = await spec.append({ tenant: t, stream: s, events: [compacted(id('sum'), names.map(id))] }).catch((e: unknown) => e);
      expect(failure).toBeInstanceOf(CompactionPrefixMismatchError);
      expect(failure).toMatchObject({ code: 'COMPACTION_PREFIX_MISMATCH', category: 'conflict', streamId: s, named: names.map(id) });
      expect(await spec.store.streamVersion(s)).toBe(version);
      expect(await spec.rows([s])).toEqual(before);
    },
  );

  it('text is stored unchanged: emoji, ZWJ sequences, combining marks, CJK, RTL, astral characters', async () => {
    const id = uniqueIds();
    const [t, s] = [id('t'), id('s')];
    const texts = ['😀'.repeat(40), '👩‍👩‍👧‍👦 and 🏳️‍🌈', 'e\u0301 n\u0303', '你好，世界。第 3 步', 'مرحبا بالعالم', 'שלום עולם \u202Bembedded\u202C', '𝕳𝖊𝖑𝖑𝖔 𠀀'];
    const m = texts.map((text, i) => (i % 2 === 0 ? player(id(`m${i}`), text) : story(id(`m${i}`), text)));
    const { rows } = await spec.check({
      when: [{ tenant: t, stream: s, events: [committed(id('e'), id('u'), ...m)] }],
      then: ({ at }) => ({
        turn_messages: m.map((x, i) => message(x, { tenant: t, session: s, turn: id('u'), execution: id('e'), ord: i + 1, committedAt: at(0) })),
      }),
    });
    expect(rows.turn_messages.map((r) => r.text)).toEqual(texts);
    expect((await spec.readModels.messages(t, s)).map((v) => v.text)).toEqual(texts);
  });

  it('rows carry their tenant; another tenant reads none of them', async () => {
    const id = uniqueIds();
    await spec.check({
      when: [
        { tenant: id('t1'), stream: id('s1'), events: [committed(id('e1'), id('u1'), player(id('m1'), 'mine'))] },
        { tenant: id('t2'), stream: id('s2'), events: [committed(id('e2'), id('u2'), player(id('m2'), 'theirs'))] },
      ],
      then: ({ at }) => ({
        turn_messages: [
          message(player(id('m1'), 'mine'), { tenant: id('t1'), session: id('s1'), turn: id('u1'), execution: id('e1'), ord: 1, committedAt: at(0) }),
          message(player(id('m2'), 'theirs'), { tenant: id('t2'), session: id('s2'), turn: id('u2'), execution: id('e2'), ord: 1, committedAt: at(1) }),
        ],
      }),
    });
    expect((await spec.readModels.messages(id('t1'), id('s1'))).map((v) => v.text)).toEqual(['mine']);
    expect(await spec.readModels.messages(id('t2'), id('s1'))).toEqual([]);
    expect(await spec.readModels.recentMessages(id('t1'), id('s2'), 10)).toEqual([]);
  });

  it('applying the same commits again gives the same rows (message ids are unique); a compaction applied again is refused, not applied twice', async () => {
    const id = uniqueIds();
    const [t, s] = [id('t'), id('s')];
    const { log, rows } = await spec.check({
      when: [
        { tenant: t, stream: s, events: [committed(id('e1'), id('u1'), player(id('m1'), 'a'), story(id('m2'), 'b'))] },
        { tenant: t, stream: s, events: [compacted(id('sum'), [id('m1')])] },
      ],
      then: { history_watermarks: [{ session_id: s, tenant_id: t, compacted_through: 1, turns: 1 }] },
    });
    const before = await spec.rows([s]);
    await spec.reapply(log.events.filter((e) => e.type === 'turn.committed@1'));
    expect(await spec.rows([s])).toEqual(before);
    // an inline compaction is applied once, in its append's transaction (a rebuild starts from no
    // rows): applied again it names a compacted message, which the safeguard refuses
    await expect(spec.reapply(log.events)).rejects.toBeInstanceOf(CompactionPrefixMismatchError);
    expect(await spec.rows([s])).toEqual(before);
    expect(rows.history_watermarks).toHaveLength(1);
  });

  it('the message the player sees of a generated asset keeps its media reference; the view shows it, and only on that row', async () => {
    const id = uniqueIds();
    const [t, s] = [id('t'), id('s')];
    const media = {
      mediaId: '0b7c6f8e-4c3a-4a57-9a51-3f7b7b0f3c11',
      modality: 'image' as const,
      mimeType: 'image/png',
      byteLength: 42,
      sha256: 'a'.repeat(64),
      content: 'a door',
    };
    const shown: CommittedMessage = { ...story(id('m2'), ''), outputKind: null, media };
    const described: CommittedMessage = { ...player(id('m3'), 'An image was shown to the player here, showing: a door'), sourceType: 'system' };
    await spec.check({
      when: [{ tenant: t, stream: s, events: [committed(id('e1'), id('u1'), player(id('m1'), 'paint'), shown, described)] }],
      then: ({ at }) => ({
        turn_messages: [player(id('m1'), 'paint'), shown, described].map((m, i) =>
          message(m, { tenant: t, session: s, turn: id('u1'), execution: id('e1'), ord: i + 1, committedAt: at(0) }),
        ),
      }),
    });
    expect((await spec.readModels.messages(t, s)).map((v) => v.media ?? null)).toEqual([null, media, null]);
  });

  describe('the opening (session.opened@1): turn 0', () => {
    it('given a session created with its opening, when the first turn commits, then the opening is the first row (a story message without a plugin) and is not counted as a turn', async () => {
      const id = uniqueIds();
      const [t, s] = [id('t'), id('s')];
      const text = 'You wake on the dragon’s back. 🐉 灰烬 مرحبا';
      const m = [player(id('m1'), 'look'), story(id('m2'), 'A river.')];
      await spec.check({
        given: [{ tenant: t, stream: s, events: [created(s), opened(id('u0'), id('o'), text)] }],
        when: [{ tenant: t, stream: s, events: [committed(id('e1'), id('u1'), ...m)] }],
        then: ({ at }) => ({
          turn_messages: [
            // the opening's execution_id is its turn id (no execution commits it)
            message(story(id('o'), text), { tenant: t, session: s, turn: id('u0'), execution: id('u0'), ord: 1, committedAt: at(1) }),
            message(m[0], { tenant: t, session: s, turn: id('u1'), execution: id('e1'), ord: 2, committedAt: at(2) }),
            message(m[1], { tenant: t, session: s, turn: id('u1'), execution: id('e1'), ord: 3, committedAt: at(2) }),
          ].map((row, i) => (i === 0 ? { ...row, plugin_id: null, runtime_id: null } : row)),
          // one committed turn: the opening is turn 0
          history_watermarks: [{ session_id: s, tenant_id: t, compacted_through: 0, turns: 1 }],
        }),
      });
      expect(openingMessage({ turnId: id('u0'), messageId: id('o'), openingIndex: 0, text })).toEqual({
        messageId: id('o'),
        role: 'assistant',
        sourceType: 'runtime',
        pluginId: null,
        runtimeId: null,
        outputKind: 'story',
        text,
      });
      const view = await spec.readModels.historyView(t, s, { bound: 100, scan: 10 });
      expect(view.uncompacted.map((r) => [r.role, r.outputKind, r.text])).toEqual([
        ['assistant', 'story', text],
        ['user', null, 'look'],
        ['assistant', 'story', 'A river.'],
      ]);
      expect(view.stats).toEqual({ total: 3, compacted: 0, uncompacted: 3, turns: 1 });
    });

    it('given only the opening, then the session has one row and no committed turn (no watermark row)', async () => {
      const id = uniqueIds();
      const [t, s] = [id('t'), id('s')];
      await spec.check({
        when: [{ tenant: t, stream: s, events: [created(s), opened(id('u0'), id('o'), 'The square is quiet.')] }],
        then: ({ at }) => ({
          turn_messages: [
            {
              ...message(story(id('o'), 'The square is quiet.'), { tenant: t, session: s, turn: id('u0'), execution: id('u0'), ord: 1, committedAt: at(1) }),
              plugin_id: null,
              runtime_id: null,
            },
          ],
          history_watermarks: [],
        }),
      });
      expect((await spec.readModels.historyView(t, s, { bound: 100, scan: 10 })).stats.turns).toBe(0);
    });

    it('a compaction may take the opening with the turns after it (the oldest uncompacted prefix); a turn after it goes on from there', async () => {
      const id = uniqueIds();
      const [t, s] = [id('t'), id('s')];
      const m = [player(id('m1'), 'a'), story(id('m2'), 'b'), player(id('m3'), 'c'), story(id('m4'), 'd')];
      await spec.check({
        given: [
          { tenant: t, stream: s, events: [created(s), opened(id('u0'), id('o'), 'Opening.')] },
          { tenant: t, stream: s, events: [committed(id('e1'), id('u1'), m[0], m[1]), committed(id('e2'), id('u2'), m[2], m[3])] },
        ],
        when: [{ tenant: t, stream: s, events: [compacted(id('sum'), [id('o'), id('m1'), id('m2')])] }],
        then: { history_watermarks: [{ session_id: s, tenant_id: t, compacted_through: 3, turns: 2 }] },
      });
      expect(await spec.readModels.uncompactedPrefix(t, s, 10)).toEqual([id('m3'), id('m4')]);
    });

    it('a compaction that skips the opening is refused like any other gap', async () => {
      const id = uniqueIds();
      const [t, s] = [id('t'), id('s')];
      await spec.append(
        { tenant: t, stream: s, events: [created(s), opened(id('u0'), id('o'), 'Opening.')] },
        { tenant: t, stream: s, events: [committed(id('e1'), id('u1'), player(id('m1'), 'a'), story(id('m2'), 'b'))] },
      );
      const failure = await spec.append({ tenant: t, stream: s, events: [compacted(id('sum'), [id('m1'), id('m2')])] }).catch((e: unknown) => e);
      expect(failure).toBeInstanceOf(CompactionPrefixMismatchError);
    });

    it('applied again from the log (a rebuild from no rows), the opening and the turns give the same rows and count', async () => {
      const id = uniqueIds();
      const [t, s] = [id('t'), id('s')];
      const { log } = await spec.check({
        when: [
          { tenant: t, stream: s, events: [created(s), opened(id('u0'), id('o'), 'Opening.')] },
          { tenant: t, stream: s, events: [committed(id('e1'), id('u1'), player(id('m1'), 'a'), story(id('m2'), 'b'))] },
        ],
        then: { history_watermarks: [{ session_id: s, tenant_id: t, compacted_through: 0, turns: 1 }] },
      });
      const rows = await spec.rows([s]);
      expect(rows.turn_messages).toHaveLength(3);
      await spec.db.deleteFrom('turn_messages').where('session_id', '=', s).execute();
      await spec.db.deleteFrom('history_watermarks').where('session_id', '=', s).execute();
      await spec.reapply(log.events);
      expect(await spec.rows([s])).toEqual(rows);
      // applied once more over its own rows: nothing changes, nothing is counted twice
      await spec.reapply(log.events);
      expect(await spec.rows([s])).toEqual(rows);
    });
  });

  describe('alternatives of the latest turn (turn.superseded@1)', () => {
    it('given two turns, when a regeneration of the second commits (superseded, then committed), then its rows take the same ords and the turn count stays', async () => {
      const id = uniqueIds();
      const [t, s] = [id('t'), id('s')];
      const m = [player(id('m1'), 'look'), story(id('m2'), 'A river.'), player(id('m3'), 'swim'), story(id('m4'), 'Cold.')];
      const again = [player(id('r3'), 'swim'), story(id('r4'), 'Warm, oddly.')];
      await spec.check({
        given: [
          { tenant: t, stream: s, events: [input(id('e1'), id('u1')), committed(id('e1'), id('u1'), m[0], m[1])] },
          { tenant: t, stream: s, events: [input(id('e2'), id('u2')), committed(id('e2'), id('u2'), m[2], m[3])] },
        ],
        when: [
          { tenant: t, stream: s, events: [input(id('e3'), id('u3'), { from: id('u2'), root: id('u2') })] },
          {
            tenant: t,
            stream: s,
            events: [superseded(id('u2'), { turnId: id('u3'), executionId: id('e3') }, 'retry'), committed(id('e3'), id('u3'), ...again)],
          },
        ],
        then: ({ at }) => ({
          turn_messages: [
            message(m[0], { tenant: t, session: s, turn: id('u1'), execution: id('e1'), ord: 1, committedAt: at(1) }),
            message(m[1], { tenant: t, session: s, turn: id('u1'), execution: id('e1'), ord: 2, committedAt: at(1) }),
            message(again[0], { tenant: t, session: s, turn: id('u3'), execution: id('e3'), ord: 3, committedAt: at(6) }),
            message(again[1], { tenant: t, session: s, turn: id('u3'), execution: id('e3'), ord: 4, committedAt: at(6) }),
          ],
          history_watermarks: [{ session_id: s, tenant_id: t, compacted_through: 0, turns: 2 }],
        }),
      });
    });

    it('given a regenerated turn, when the first alternative is selected, then its messages are back in the same ords (as first committed) and a next turn follows them', async () => {
      const id = uniqueIds();
      const [t, s] = [id('t'), id('s')];
      const m = [player(id('m1'), 'look'), story(id('m2'), 'A river.')];
      const again = [player(id('r1'), 'look'), story(id('r2'), 'A lake.')];
      const next = [player(id('n1'), 'walk'), story(id('n2'), 'Sand.')];
      await spec.check({
        given: [
          { tenant: t, stream: s, events: [input(id('e1'), id('u1')), committed(id('e1'), id('u1'), ...m)] },
          { tenant: t, stream: s, events: [input(id('e2'), id('u2'), { from: id('u1'), root: id('u1') })] },
          {
            tenant: t,
            stream: s,
            events: [superseded(id('u1'), { turnId: id('u2'), executionId: id('e2') }, 'retry'), committed(id('e2'), id('u2'), ...again)],
          },
        ],
        when: [
          { tenant: t, stream: s, events: [superseded(id('u2'), { turnId: id('u1'), executionId: id('e1') }, 'select', m, id('u1'))] },
          { tenant: t, stream: s, events: [input(id('e3'), id('u3')), committed(id('e3'), id('u3'), ...next)] },
        ],
        then: ({ at }) => ({
          turn_messages: [
            message(m[0], { tenant: t, session: s, turn: id('u1'), execution: id('e1'), ord: 1, committedAt: at(1) }),
            message(m[1], { tenant: t, session: s, turn: id('u1'), execution: id('e1'), ord: 2, committedAt: at(1) }),
            message(next[0], { tenant: t, session: s, turn: id('u3'), execution: id('e3'), ord: 3, committedAt: at(7) }),
            message(next[1], { tenant: t, session: s, turn: id('u3'), execution: id('e3'), ord: 4, committedAt: at(7) }),
          ],
          history_watermarks: [{ session_id: s, tenant_id: t, compacted_through: 0, turns: 2 }],
        }),
      });
    });

    it.each([
      ['a turn that is not the latest', 'u1'],
      ['a turn the session does not have', 'nope'],
    ])('superseding %s is refused: the append fails and no row changes', async (_what, turn) => {
      const id = uniqueIds();
      const [t, s] = [id('t'), id('s')];
      await spec.append(
        { tenant: t, stream: s, events: [committed(id('e1'), id('u1'), player(id('m1'), 'a'), story(id('m2'), 'b'))] },
        { tenant: t, stream: s, events: [committed(id('e2'), id('u2'), player(id('m3'), 'c'), story(id('m4'), 'd'))] },
      );
      const before = await spec.rows([s]);
      const version = await spec.store.streamVersion(s);
      const failure = await spec
        .append({ tenant: t, stream: s, events: [superseded(id(turn), { turnId: id('u9'), executionId: id('e9') }, 'select', [player(id('m9'), 'x')])] })
        .catch((e: unknown) => e);
      expect(failure).toBeInstanceOf(SupersededTurnNotLatestError);
      expect(failure).toMatchObject({ code: 'SUPERSEDED_TURN_NOT_LATEST', category: 'conflict', turnId: id(turn) });
      expect(await spec.store.streamVersion(s)).toBe(version);
      expect(await spec.rows([s])).toEqual(before);
    });

    it('a latest turn already compacted cannot be superseded', async () => {
      const id = uniqueIds();
      const [t, s] = [id('t'), id('s')];
      await spec.append(
        { tenant: t, stream: s, events: [committed(id('e1'), id('u1'), player(id('m1'), 'a'), story(id('m2'), 'b'))] },
        { tenant: t, stream: s, events: [compacted(id('sum'), [id('m1'), id('m2')])] },
      );
      const failure = await spec
        .append({ tenant: t, stream: s, events: [superseded(id('u1'), { turnId: id('u2'), executionId: id('e2') }, 'retry')] })
        .catch((e: unknown) => e);
      expect(failure).toBeInstanceOf(SupersededTurnNotLatestError);
    });

    it('applied again from the log (a rebuild from no rows), retries and selections give the same rows', async () => {
      const id = uniqueIds();
      const [t, s] = [id('t'), id('s')];
      const m = [player(id('m1'), 'look'), story(id('m2'), 'A river.')];
      const alt = (n: number) => [player(id(`r${n}a`), 'look'), story(id(`r${n}b`), `Take ${n}.`)];
      const root = id('u0');
      const { log, rows } = await spec.check({
        given: [{ tenant: t, stream: s, events: [input(id('e0'), root), committed(id('e0'), root, ...m)] }],
        when: [
          { tenant: t, stream: s, events: [input(id('e1'), id('u1'), { from: root, root })] },
          {
            tenant: t,
            stream: s,
            events: [superseded(root, { turnId: id('u1'), executionId: id('e1') }, 'retry'), committed(id('e1'), id('u1'), ...alt(1))],
          },
          { tenant: t, stream: s, events: [input(id('e2'), id('u2'), { from: id('u1'), root })] },
          {
            tenant: t,
            stream: s,
            events: [superseded(id('u1'), { turnId: id('u2'), executionId: id('e2') }, 'retry', undefined, root), committed(id('e2'), id('u2'), ...alt(2))],
          },
          { tenant: t, stream: s, events: [superseded(id('u2'), { turnId: id('u1'), executionId: id('e1') }, 'select', alt(1), root)] },
        ],
        then: ({ at }) => ({
          turn_messages: alt(1).map((x, i) => message(x, { tenant: t, session: s, turn: id('u1'), execution: id('e1'), ord: i + 1, committedAt: at(4) })),
          history_watermarks: [{ session_id: s, tenant_id: t, compacted_through: 0, turns: 1 }],
        }),
      });
      await spec.db.deleteFrom('turn_messages').where('session_id', '=', s).execute();
      await spec.db.deleteFrom('history_watermarks').where('session_id', '=', s).execute();
      await spec.reapply(log.events);
      expect(await spec.rows([s])).toEqual(rows);
    });
  });
});
