import { auditTurn } from '../../audit/turn-audit';
import { loadRuntimeHistory } from '../../history/history-loader';
import { historyReadLimit } from '../../execution/deps';
import type { TurnHarness } from '../../turn/test/harness';
import { eventData as of, expectReplayIdentical, playTurn, smallWindowHarness } from './long-session';

describe('a long session with the default history-compaction plugin on an 8k window (emulator as story and summary model)', () => {
  let h: TurnHarness;
  beforeAll(async () => {
    h = await smallWindowHarness();
  });
  afterAll(() => h.close());

  it('compacts several times; each compaction one event with its barrier end; no message lost; summaries within the cap; audit and replay exact', async () => {
    const session = await h.session();
    const TURNS = 24;
    const turnIds: string[] = [];
    for (let i = 1; i <= TURNS; i++) {
      const job = await playTurn(h, session, `Turn ${i}: ${'I search the flooded archive shelf by shelf, reading every spine aloud. '.repeat(40)}`);
      turnIds.push(job.turnId);
    }
    const events = await h.events(session.sessionId);
    const passed = of(events, 'compaction.barrier-passed@1');
    expect(passed.map((p) => p.outcome)).toEqual(passed.map(() => 'compacted'));
    expect(passed.length).toBeGreaterThanOrEqual(2);
    const compacted = of(events, 'history.compacted@1');
    expect(compacted.map((c) => c.compactionId)).toEqual(passed.map((p) => p.compactionId));

    // no message lost from the log: every turn's input and story are rows, compacted or not
    const read = await loadRuntimeHistory(h.deps.readModels, session.tenantId, session.sessionId, historyReadLimit(h.deps), { withCoverage: true });
    expect(read.stats).toMatchObject({ total: 2 * TURNS, turns: TURNS });
    // markers and summaries agree: the summaries cover exactly the compacted prefix, in order
    const all = (await h.deps.readModels.messages(session.tenantId, session.sessionId)).map((m) => m.messageId);
    expect(read.summaries.flatMap((s) => s.messageIds ?? [])).toEqual(all.slice(0, read.stats.compacted));
    expect(read.summaries.length).toBeLessThanOrEqual(8);

    // the story request after the first compaction carries the envelope
    const lastCall = of(events, 'llm.calling@1').at(-1)!;
    expect(lastCall.body as string).toContain('<compacted_history>');

    for (const turnId of turnIds)
      expect((await auditTurn({ ...h.deps, historyReadLimit: historyReadLimit(h.deps) }, session.sessionId, turnId)).identical).toBe(true);

    await expectReplayIdentical(h, session);
  }, 120_000);
});
