import { auditTurn } from '../../audit/turn-audit';
import { historyReadLimit } from '../../execution/deps';
import type { TurnHarness } from '../../turn/test/harness';
import { eventData as of, expectReplayIdentical, playTurn, smallWindowHarness } from './long-session';

describe('the barrier reads what the stage reads (default plugins, 8k window)', () => {
  let h: TurnHarness;
  beforeAll(async () => {
    h = await smallWindowHarness();
  });
  afterAll(() => h.close());

  it('a turn without compaction reads the history with the journal only (the barrier and the runtime take those rows); the coverage is read only to compact', async () => {
    const session = await h.session();
    const views = jest.spyOn(h.deps.readModels, 'historyView');
    const summaries = jest.spyOn(h.deps.readModels, 'summaries');
    const perTurn: { views: number; covered: number; compacted: boolean }[] = [];
    const turnIds: string[] = [];
    for (let i = 1; i <= 10; i++) {
      views.mockClear();
      summaries.mockClear();
      const job = await playTurn(h, session, `Turn ${i}: ${'I search the flooded archive shelf by shelf, reading every spine aloud. '.repeat(40)}`);
      turnIds.push(job.turnId);
      const passed = of(await h.events(session.sessionId), 'compaction.barrier-passed@1').filter((p) => p.executionId === job.executionId);
      perTurn.push({
        views: views.mock.calls.filter((c) => c[1] === session.sessionId).length,
        covered: summaries.mock.calls.filter((c) => c[1] === session.sessionId && c[2]?.withMessageIds === true).length,
        compacted: passed.some((p) => p.outcome === 'compacted'),
      });
    }
    views.mockRestore();
    summaries.mockRestore();
    const quiet = perTurn.filter((t) => !t.compacted);
    const compacting = perTurn.filter((t) => t.compacted);
    expect(compacting.length).toBeGreaterThanOrEqual(1);
    expect(quiet.length).toBeGreaterThanOrEqual(4);
    // the history came with the turn step's journal read: the barrier and the narrator's job take it, no read of their own; no coverage read
    expect(quiet).toEqual(quiet.map(() => ({ views: 0, covered: 0, compacted: false })));
    // a compaction moves the session: the runtime job reads the compacted view anew; the provider gets the coverage
    expect(compacting).toEqual(compacting.map(() => ({ views: 1, covered: 1, compacted: true })));
    const lastCall = of(await h.events(session.sessionId), 'llm.calling@1').at(-1)!;
    expect(lastCall.body as string).toContain('<compacted_history>');
    for (const turnId of turnIds)
      expect((await auditTurn({ ...h.deps, historyReadLimit: historyReadLimit(h.deps) }, session.sessionId, turnId)).identical).toBe(true);
    await expectReplayIdentical(h, session);
  }, 120_000);
});
