import { projectionSpec, uniqueIds } from '../../../test/support/projection-spec';
import type { CommittedMessage, NewEvent } from '../event-types';
import { pluginDataProjection } from './plugin-data';
import { summariesProjection } from './summaries';
import { turnMessagesProjection } from './turn-messages';

/** Issue 30: the story's read models follow the path (revert, edit, cancel, branch, alternatives), given events → then rows. */
const history = projectionSpec({ inline: turnMessagesProjection });
const summaries = projectionSpec({ inline: summariesProjection });
const data = projectionSpec({ inline: pluginDataProjection });
beforeAll(() => Promise.all([history.start(), summaries.start(), data.start()]), 180_000);
afterAll(() => Promise.all([history.stop(), summaries.stop(), data.stop()]));

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
const committed = (executionId: string, turnId: string, ...messages: CommittedMessage[]): NewEvent => ({
  type: 'turn.committed@1',
  data: { executionId, turnId, attempt: 1, messages },
});
/** A whole turn: its input and its commit of a player message and a story message. */
const turn = (id: (name: string) => string, n: number, text = `Story ${n}.`): NewEvent[] => [
  input(id(`e${n}`), id(`u${n}`)),
  committed(id(`e${n}`), id(`u${n}`), player(id(`p${n}`), `input ${n}`), story(id(`s${n}`), text)),
];
const reverted = (turnIds: string[], executionIds: string[]): NewEvent => ({
  type: 'turn.reverted@1',
  data: { turnId: turnIds[0], turnIds, executionIds, by: 'tenant:t' },
});
const write = (executionId: string, turnId: string, key: string, value: unknown): NewEvent => ({
  type: 'plugin-data.written@1',
  data: { executionId, turnId, attempt: 1, pluginId: 'affinity', namespace: 'scores', key, value: value as never },
});
const compacted = (summaryId: string, messageIds: string[], replacesSummaryIds: string[] = []): NewEvent => ({
  type: 'history.compacted@1',
  data: { compactionId: `${summaryId}-c`, summaries: [{ summaryId, messageIds, replacesSummaryIds, content: `summary ${summaryId}` }] },
});

/** The (message id, text, ord, turn) of each history row: what these scenarios compare. */
async function historyOf(session: string) {
  const rows = await history.db
    .selectFrom('turn_messages')
    .select(['message_id', 'text', 'ord', 'turn_id', 'compacted'])
    .where('session_id', '=', session)
    .orderBy('ord')
    .execute();
  return rows.map((r) => ({ id: r.message_id, text: r.text, ord: r.ord, turn: r.turn_id, compacted: r.compacted }));
}
async function turnsOf(session: string) {
  const row = await history.db.selectFrom('history_watermarks').select(['turns', 'compacted_through']).where('session_id', '=', session).executeTakeFirst();
  return row ? { turns: row.turns, compactedThrough: row.compacted_through } : null;
}
async function dataOf(session: string) {
  const rows = await data.db.selectFrom('plugin_data').select(['key', 'value']).where('session_id', '=', session).orderBy('created_position').execute();
  return Object.fromEntries(rows.map((r) => [r.key, r.value]));
}

describe('turn_messages follows the story path', () => {
  it('given three turns, when turn 2 is reverted, then only turn 1 is in the history, counted once; the next turn takes the next ords', async () => {
    const id = uniqueIds();
    const [t, s] = [id('t'), id('s')];
    await history.append({ tenant: t, stream: s, events: [...turn(id, 1), ...turn(id, 2), ...turn(id, 3)] });
    await history.append({ tenant: t, stream: s, events: [reverted([id('u2'), id('u3')], [id('e2'), id('e3')])] });
    expect((await historyOf(s)).map((m) => m.id)).toEqual([id('p1'), id('s1')]);
    expect(await turnsOf(s)).toEqual({ turns: 1, compactedThrough: 0 });
    await history.append({ tenant: t, stream: s, events: turn(id, 4) });
    expect((await historyOf(s)).map((m) => [m.id, m.ord])).toEqual([
      [id('p1'), 1],
      [id('s1'), 2],
      [id('p4'), 3],
      [id('s4'), 4],
    ]);
  });

  it('an edit replaces a message’s text byte for byte (emoji, ZWJ, CJK, RTL); an edit of a reverted turn’s message leaves with it', async () => {
    const id = uniqueIds();
    const [t, s] = [id('t'), id('s')];
    const text = 'Edited 👨‍👩‍👧 灯塔 مرحبا';
    await history.append({ tenant: t, stream: s, events: [...turn(id, 1), ...turn(id, 2)] });
    await history.append({
      tenant: t,
      stream: s,
      events: [
        { type: 'message.edited@1', data: { messageId: id('s1'), turnId: id('u1'), text, by: 'tenant:t' } },
        { type: 'message.edited@1', data: { messageId: id('s2'), turnId: id('u2'), text: 'gone soon', by: 'tenant:t' } },
      ],
    });
    expect((await historyOf(s)).map((m) => m.text)).toEqual(['input 1', text, 'input 2', 'gone soon']);
    await history.append({ tenant: t, stream: s, events: [reverted([id('u2')], [id('e2')])] });
    expect((await historyOf(s)).map((m) => m.text)).toEqual(['input 1', text]);
  });

  it('a compaction covering a reverted message is dropped (its messages uncompacted again); one covering only kept messages stays', async () => {
    const id = uniqueIds();
    const [t, s] = [id('t'), id('s')];
    await history.append({ tenant: t, stream: s, events: [...turn(id, 1), ...turn(id, 2), ...turn(id, 3)] });
    await history.append({ tenant: t, stream: s, events: [compacted(id('a'), [id('p1'), id('s1')])] });
    await history.append({ tenant: t, stream: s, events: [compacted(id('b'), [id('p2'), id('s2')])] });
    await history.append({ tenant: t, stream: s, events: [reverted([id('u2'), id('u3')], [id('e2'), id('e3')])] });
    expect(await historyOf(s)).toEqual([
      { id: id('p1'), text: 'input 1', ord: 1, turn: id('u1'), compacted: true },
      { id: id('s1'), text: 'Story 1.', ord: 2, turn: id('u1'), compacted: true },
    ]);
    expect(await turnsOf(s)).toEqual({ turns: 1, compactedThrough: 2 });
  });

  it('a cancel that kept the partial turn commits it; one that kept nothing adds no row', async () => {
    const id = uniqueIds();
    const [t, s] = [id('t'), id('s')];
    await history.append({ tenant: t, stream: s, events: [...turn(id, 1), input(id('e2'), id('u2'))] });
    await history.append({
      tenant: t,
      stream: s,
      events: [{ type: 'execution.cancelled@1', data: { executionId: id('e2'), turnId: id('u2'), keepPartial: false, by: 'tenant:t' } }],
    });
    expect(await historyOf(s)).toHaveLength(2);
    const kept = [player(id('p3'), 'go'), story(id('s3'), 'The door cre')];
    await history.append({ tenant: t, stream: s, events: [input(id('e3'), id('u3'))] });
    await history.append({
      tenant: t,
      stream: s,
      events: [{ type: 'execution.cancelled@1', data: { executionId: id('e3'), turnId: id('u3'), keepPartial: true, messages: kept, by: 'tenant:t' } }],
    });
    expect((await historyOf(s)).map((m) => m.text)).toEqual(['input 1', 'Story 1.', 'go', 'The door cre']);
    expect(await turnsOf(s)).toEqual({ turns: 2, compactedThrough: 0 });
  });

  it('given a parent of three turns, when a branch is made at turn 2, then the branch’s history is the opening and turns 1–2 under its own id, and its turns follow', async () => {
    const id = uniqueIds();
    const [t, parent, branch] = [id('t'), id('parent'), id('branch')];
    const opening: NewEvent = { type: 'session.opened@1', data: { turnId: id('u0'), messageId: id('o'), openingIndex: 0, text: 'You wake.' } };
    const [appended] = await history.append({ tenant: t, stream: parent, events: [opening, ...turn(id, 1), ...turn(id, 2), ...turn(id, 3)] });
    const parentVersion = appended.streamVersion + 6;
    await history.append({
      tenant: t,
      stream: branch,
      events: [{ type: 'session.branched@1', data: { parentSessionId: parent, atTurnId: id('u2'), parentVersion, by: 'tenant:t' } }],
    });
    // the parent goes on after the branch: the branch does not see it
    await history.append({ tenant: t, stream: parent, events: turn(id, 9) });
    expect((await historyOf(branch)).map((m) => [m.id, m.ord])).toEqual([
      [id('o'), 1],
      [id('p1'), 2],
      [id('s1'), 3],
      [id('p2'), 4],
      [id('s2'), 5],
    ]);
    expect(await turnsOf(branch)).toEqual({ turns: 2, compactedThrough: 0 });
    await history.append({ tenant: t, stream: branch, events: turn(id, 4, 'Branch story.') });
    expect((await historyOf(branch)).map((m) => m.text).slice(-2)).toEqual(['input 4', 'Branch story.']);
    // the parent keeps all its turns
    expect(await historyOf(parent)).toHaveLength(9);
  });

  it('a branch at the opening keeps only the opening', async () => {
    const id = uniqueIds();
    const [t, parent, branch] = [id('t'), id('parent'), id('branch')];
    const opening: NewEvent = { type: 'session.opened@1', data: { turnId: id('u0'), messageId: id('o'), openingIndex: 0, text: 'Dawn.' } };
    await history.append({ tenant: t, stream: parent, events: [opening, ...turn(id, 1)] });
    await history.append({
      tenant: t,
      stream: branch,
      events: [{ type: 'session.branched@1', data: { parentSessionId: parent, atTurnId: id('u0'), parentVersion: 3, by: 'tenant:t' } }],
    });
    expect((await historyOf(branch)).map((m) => m.id)).toEqual([id('o')]);
  });
});

describe('summaries follow the story path', () => {
  it('a revert drops the summaries covering a reverted message and keeps the others', async () => {
    const id = uniqueIds();
    const [t, s] = [id('t'), id('s')];
    await summaries.append({ tenant: t, stream: s, events: [...turn(id, 1), ...turn(id, 2), ...turn(id, 3)] });
    await summaries.append({ tenant: t, stream: s, events: [compacted(id('a'), [id('p1'), id('s1')]), compacted(id('b'), [id('p2'), id('s2')])] });
    const before = await summaries.db.selectFrom('summaries').select(['summary_id']).where('session_id', '=', s).execute();
    expect(before.map((r) => r.summary_id)).toEqual([id('a'), id('b')]);
    await summaries.append({ tenant: t, stream: s, events: [reverted([id('u2'), id('u3')], [id('e2'), id('e3')])] });
    const after = await summaries.db.selectFrom('summaries').select(['summary_id', 'seq']).where('session_id', '=', s).execute();
    expect(after).toEqual([{ summary_id: id('a'), seq: 1 }]);
  });

  it('a branch holds its parent’s summaries up to the branch point, under its own session', async () => {
    const id = uniqueIds();
    const [t, parent, branch] = [id('t'), id('parent'), id('branch')];
    await summaries.append({ tenant: t, stream: parent, events: [...turn(id, 1), ...turn(id, 2), ...turn(id, 3), compacted(id('a'), [id('p1'), id('s1')])] });
    await summaries.append({
      tenant: t,
      stream: branch,
      events: [{ type: 'session.branched@1', data: { parentSessionId: parent, atTurnId: id('u2'), parentVersion: 7, by: 'tenant:t' } }],
    });
    const rows = await summaries.db
      .selectFrom('summaries')
      .select(['summary_id', 'session_id'])
      .where('session_id', 'in', [parent, branch])
      .orderBy('session_id')
      .execute();
    expect(rows.sort((a, b) => a.session_id.localeCompare(b.session_id))).toEqual(
      [
        { summary_id: id('a'), session_id: parent },
        { summary_id: id('a'), session_id: branch },
      ].sort((a, b) => a.session_id.localeCompare(b.session_id)),
    );
  });
});

describe('compactions follow the turn whose barrier made them', () => {
  /** A turn that compacted before its commit: its input, the compaction and the barrier's record of it, its commit. */
  const compactingTurn = (id: (name: string) => string, n: number, summaryId: string, messageIds: string[]): NewEvent[] => [
    input(id(`e${n}`), id(`u${n}`)),
    compacted(summaryId, messageIds),
    {
      type: 'compaction.barrier-passed@1',
      data: {
        executionId: id(`e${n}`),
        turnId: id(`u${n}`),
        attempt: 1,
        pluginId: 'narrator',
        runtimeId: 'story',
        estimatedTokens: 6000,
        triggerWindow: 7168,
        thresholdTokens: 5376,
        outcome: 'compacted',
        compactionId: `${summaryId}-c`,
      },
    },
    committed(id(`e${n}`), id(`u${n}`), player(id(`p${n}`), `input ${n}`), story(id(`s${n}`), `Story ${n}.`)),
  ];

  it('a revert undoes the compactions the reverted turns made, even of kept messages; a kept turn’s compaction stays', async () => {
    const id = uniqueIds();
    const [t, s] = [id('t'), id('s')];
    const events = [
      ...turn(id, 1),
      ...compactingTurn(id, 2, id('a'), [id('p1'), id('s1')]),
      ...compactingTurn(id, 3, id('b'), [id('p2'), id('s2')]),
      ...turn(id, 4),
    ];
    const revert = reverted([id('u3'), id('u4')], [id('e3'), id('e4')]);
    await history.append({ tenant: t, stream: s, events });
    await history.append({ tenant: t, stream: s, events: [revert] });
    expect((await historyOf(s)).map((m) => [m.id, m.compacted])).toEqual([
      [id('p1'), true],
      [id('s1'), true],
      [id('p2'), false],
      [id('s2'), false],
    ]);
    expect(await turnsOf(s)).toEqual({ turns: 2, compactedThrough: 2 });
    await summaries.append({ tenant: t, stream: s, events });
    await summaries.append({ tenant: t, stream: s, events: [revert] });
    const rows = await summaries.db.selectFrom('summaries').select(['summary_id']).where('session_id', '=', s).execute();
    expect(rows.map((r) => r.summary_id)).toEqual([id('a')]);
  });

  it('a turn that compacted and then failed or was stopped takes its compaction along (history and summaries alike)', async () => {
    for (const end of ['failed', 'cancelled'] as const) {
      const id = uniqueIds();
      const [t, s] = [id('t'), id('s')];
      const [input3, compaction, barrier] = compactingTurn(id, 3, id('a'), [id('p1'), id('s1')]);
      const ended: NewEvent =
        end === 'failed'
          ? { type: 'execution.failed@1', data: { executionId: id('e3'), turnId: id('u3'), attempt: 1, error: { code: 'X', message: 'x' }, discarded: true } }
          : { type: 'execution.cancelled@1', data: { executionId: id('e3'), turnId: id('u3'), keepPartial: false, by: 'tenant:t' } };
      for (const spec of [history, summaries]) {
        await spec.append({ tenant: t, stream: s, events: [...turn(id, 1), ...turn(id, 2), input3, compaction, barrier] });
        await spec.append({ tenant: t, stream: s, events: [ended] });
      }
      expect((await historyOf(s)).map((m) => m.compacted)).toEqual([false, false, false, false]);
      expect(await turnsOf(s)).toEqual({ turns: 2, compactedThrough: 0 });
      expect(await summaries.db.selectFrom('summaries').select('summary_id').where('session_id', '=', s).execute()).toEqual([]);
    }
  });

  it('a regeneration of a turn that compacted reads the history as it stood before that turn: the compaction and the turn leave when it starts', async () => {
    const id = uniqueIds();
    const [t, s] = [id('t'), id('s')];
    const first = compactingTurn(id, 3, id('a'), [id('p1'), id('s1')]);
    const regeneration = input(id('e9'), id('u9'), { from: id('u3'), root: id('u3') });
    for (const spec of [history, summaries]) {
      await spec.append({ tenant: t, stream: s, events: [...turn(id, 1), ...turn(id, 2), ...first] });
      await spec.append({ tenant: t, stream: s, events: [regeneration] });
    }
    expect((await historyOf(s)).map((m) => [m.id, m.compacted])).toEqual([
      [id('p1'), false],
      [id('s1'), false],
      [id('p2'), false],
      [id('s2'), false],
    ]);
    expect(await summaries.db.selectFrom('summaries').select('summary_id').where('session_id', '=', s).execute()).toEqual([]);
    // it commits in the turn's place (superseded, then committed)
    await history.append({
      tenant: t,
      stream: s,
      events: [
        { type: 'turn.superseded@1', data: { alternativeOf: id('u3'), turnId: id('u3'), byTurnId: id('u9'), byExecutionId: id('e9'), cause: 'retry' } },
        committed(id('e9'), id('u9'), player(id('p9'), 'input 3'), story(id('s9'), 'Story 3, again.')),
      ],
    });
    expect((await historyOf(s)).map((m) => m.id)).toEqual([id('p1'), id('s1'), id('p2'), id('s2'), id('p9'), id('s9')]);
  });

  it('a branch does not read a compaction its parent made after the branch point', async () => {
    const id = uniqueIds();
    const [t, parent, branch] = [id('t'), id('parent'), id('branch')];
    const [appended] = await history.append({
      tenant: t,
      stream: parent,
      events: [...turn(id, 1), ...turn(id, 2), ...compactingTurn(id, 3, id('a'), [id('p1'), id('s1')])],
    });
    await history.append({
      tenant: t,
      stream: branch,
      events: [
        { type: 'session.branched@1', data: { parentSessionId: parent, atTurnId: id('u2'), parentVersion: appended.streamVersion + 7, by: 'tenant:t' } },
      ],
    });
    expect((await historyOf(branch)).map((m) => [m.id, m.compacted])).toEqual([
      [id('p1'), false],
      [id('s1'), false],
      [id('p2'), false],
      [id('s2'), false],
    ]);
  });
});

describe('plugin data follows the story path', () => {
  it('a regeneration reads the state before the turn it re-runs; each alternative keeps its own writes; selecting one brings its state back', async () => {
    const id = uniqueIds();
    const [t, s] = [id('t'), id('s')];
    const root = id('u1');
    await data.append({ tenant: t, stream: s, events: [write('e0', 'u0', 'trust', 5)] });
    await data.append({ tenant: t, stream: s, events: [input(id('e1'), root), write(id('e1'), root, 'trust', 6), write(id('e1'), root, 'met', true)] });
    await data.append({ tenant: t, stream: s, events: [committed(id('e1'), root, player(id('p1'), 'hi'), story(id('s1'), 'Hello.'))] });
    expect(await dataOf(s)).toEqual({ trust: 6, met: true });
    // the regeneration starts: the first alternative's writes leave
    await data.append({ tenant: t, stream: s, events: [input(id('e2'), id('u2'), { from: root, root })] });
    expect(await dataOf(s)).toEqual({ trust: 5 });
    await data.append({ tenant: t, stream: s, events: [write(id('e2'), id('u2'), 'trust', 4)] });
    await data.append({
      tenant: t,
      stream: s,
      events: [
        {
          type: 'turn.superseded@1',
          data: { alternativeOf: root, turnId: root, byTurnId: id('u2'), byExecutionId: id('e2'), cause: 'retry' },
        },
        committed(id('e2'), id('u2'), player(id('p2'), 'hi'), story(id('s2'), 'Go away.')),
      ],
    });
    expect(await dataOf(s)).toEqual({ trust: 4 });
    await data.append({
      tenant: t,
      stream: s,
      events: [{ type: 'turn.superseded@1', data: { alternativeOf: root, turnId: id('u2'), byTurnId: root, byExecutionId: id('e1'), cause: 'select' } }],
    });
    expect(await dataOf(s)).toEqual({ trust: 6, met: true });
  });

  it('a failed regeneration gives the place back: the selected alternative’s state returns', async () => {
    const id = uniqueIds();
    const [t, s] = [id('t'), id('s')];
    const root = id('u1');
    await data.append({
      tenant: t,
      stream: s,
      events: [input(id('e1'), root), write(id('e1'), root, 'trust', 6), committed(id('e1'), root, player(id('p1'), 'a'))],
    });
    await data.append({ tenant: t, stream: s, events: [input(id('e2'), id('u2'), { from: root, root }), write(id('e2'), id('u2'), 'trust', 1)] });
    expect(await dataOf(s)).toEqual({ trust: 1 });
    await data.append({
      tenant: t,
      stream: s,
      events: [{ type: 'execution.failed@1', data: { executionId: id('e2'), turnId: id('u2'), attempt: 1, error: { code: 'X', message: 'x' } } }],
    });
    expect(await dataOf(s)).toEqual({ trust: 6 });
  });

  it('a failed turn’s plugin data leaves with it (`discarded`); a failure recorded before issue 30 keeps it, as its audits read it', async () => {
    const id = uniqueIds();
    const [t, s, old] = [id('t'), id('s'), id('old')];
    const failed = (executionId: string, turnId: string, discarded: boolean): NewEvent => ({
      type: 'execution.failed@1',
      data: { executionId, turnId, attempt: 1, error: { code: 'X', message: 'x' }, ...(discarded ? { discarded: true as const } : {}) },
    });
    for (const [session, discarded] of [
      [s, true],
      [old, false],
    ] as const) {
      await data.append({ tenant: t, stream: session, events: [input(id('e1'), id('u1')), write(id('e1'), id('u1'), 'trust', 1)] });
      await data.append({
        tenant: t,
        stream: session,
        events: [input(id('e2'), id('u2')), write(id('e2'), id('u2'), 'trust', 2), write(id('e2'), id('u2'), 'seen', 'x')],
      });
      await data.append({ tenant: t, stream: session, events: [failed(id('e2'), id('u2'), discarded)] });
    }
    expect(await dataOf(s)).toEqual({ trust: 1 });
    expect(await dataOf(old)).toEqual({ trust: 2, seen: 'x' });
  });

  it('a revert restores every value to what it was before the reverted turn (a rewritten key its old value, a new key gone)', async () => {
    const id = uniqueIds();
    const [t, s] = [id('t'), id('s')];
    await data.append({ tenant: t, stream: s, events: [input(id('e1'), id('u1')), write(id('e1'), id('u1'), 'trust', 1)] });
    await data.append({
      tenant: t,
      stream: s,
      events: [input(id('e2'), id('u2')), write(id('e2'), id('u2'), 'trust', 2), write(id('e2'), id('u2'), 'scar', 'left arm')],
    });
    await data.append({ tenant: t, stream: s, events: [input(id('e3'), id('u3')), write(id('e3'), id('u3'), 'trust', 3)] });
    const fresh = id('fresh');
    await data.append({ tenant: t, stream: fresh, events: [input(id('e1'), id('u1')), write(id('e1'), id('u1'), 'trust', 1)] });
    await data.append({ tenant: t, stream: s, events: [reverted([id('u2'), id('u3')], [id('e2'), id('e3')])] });
    expect(await dataOf(s)).toEqual(await dataOf(fresh));
    const counts = await data.db.selectFrom('plugin_data_namespaces').select('row_count').where('session_id', '=', s).execute();
    expect(counts).toEqual([{ row_count: 1 }]);
  });

  it('a cancelled turn’s writes leave; a branch inherits its parent’s plugin data up to the branch point', async () => {
    const id = uniqueIds();
    const [t, s, branch] = [id('t'), id('s'), id('branch')];
    await data.append({ tenant: t, stream: s, events: [input(id('e1'), id('u1')), write(id('e1'), id('u1'), 'trust', 1)] });
    await data.append({ tenant: t, stream: s, events: [input(id('e2'), id('u2')), write(id('e2'), id('u2'), 'trust', 2)] });
    await data.append({
      tenant: t,
      stream: s,
      events: [{ type: 'execution.cancelled@1', data: { executionId: id('e2'), turnId: id('u2'), keepPartial: false, by: 'tenant:t' } }],
    });
    expect(await dataOf(s)).toEqual({ trust: 1 });
    await data.append({
      tenant: t,
      stream: s,
      events: [input(id('e3'), id('u3')), write(id('e3'), id('u3'), 'trust', 3), write(id('e3'), id('u3'), 'later', 1)],
    });
    await data.append({
      tenant: t,
      stream: branch,
      events: [{ type: 'session.branched@1', data: { parentSessionId: s, atTurnId: id('u1'), parentVersion: 8, by: 'tenant:t' } }],
    });
    expect(await dataOf(branch)).toEqual({ trust: 1 });
    // the branch's own writes come after what it inherited
    await data.append({ tenant: t, stream: branch, events: [input(id('e4'), id('u4')), write(id('e4'), id('u4'), 'mine', 'b')] });
    const rows = await data.db.selectFrom('plugin_data').select(['key']).where('session_id', '=', branch).orderBy('created_position').execute();
    expect(rows.map((r) => r.key)).toEqual(['trust', 'mine']);
  });
});
