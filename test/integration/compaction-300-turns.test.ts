import { historyReadLimit } from '../../libs/engine/execution/deps';
import { auditTurn } from '../../libs/engine/audit/turn-audit';
import { loadRuntimeHistory } from '../../libs/engine/history/history-loader';
import type { TurnHarness } from '../../libs/engine/turn/test/harness';
import {
  eventData as of,
  expectReplayIdentical,
  expectSummariesCoverCompactedPrefix,
  playTurn,
  smallWindowHarness,
} from '../../libs/engine/barrier/test/long-session';

const TURNS = 300;
const SUMMARY_SEGMENT_CAP = 8;

/**
 * Issue 12's acceptance: a 300-turn session on the emulator (story and summary model) with an 8k
 * window and the repository's default plugins. Unit-suite sibling with 24 turns:
 * libs/engine/barrier/test/default-plugin-turns.test.ts. Needs no server; it is here because it
 * takes about 45 s on the 2-core machine (300 turns, 6 compactions, ~20 audited turns).
 */
describe('a 300-turn session on an 8k window with the default plugins', () => {
  let h: TurnHarness;
  beforeAll(async () => {
    h = await smallWindowHarness();
  });
  afterAll(() => h.close());

  it('compacts several times, each consistent when it happens; nothing lost; audit across compactions and replay exact', async () => {
    const session = await h.session();
    const bound = historyReadLimit(h.deps);
    const inputs: string[] = [];
    const turnIds: string[] = [];
    /** Index (0-based) of each turn that compacted. */
    const compactedAt: number[] = [];
    let compactedRows = 0;
    for (let i = 0; i < TURNS; i++) {
      const text = `Turn ${i + 1}: I search the flooded archive shelf by shelf and read the spines aloud. `.repeat(1 + (i % 4));
      const job = await playTurn(h, session, text);
      inputs.push(text);
      turnIds.push(job.turnId);
      const read = await loadRuntimeHistory(h.deps.readModels, session.tenantId, session.sessionId, bound, { withCoverage: true });
      if (read.stats.compacted === compactedRows) continue;
      // right after each compaction: markers and summaries agree (the summaries cover exactly the
      // compacted prefix, in order; the rest is the uncompacted view), within the segment cap
      compactedAt.push(i);
      compactedRows = read.stats.compacted;
      await expectSummariesCoverCompactedPrefix(h, session, read);
      expect(read.summaries.length).toBeLessThanOrEqual(SUMMARY_SEGMENT_CAP);
      // it compacted all the plugin may: of the history before this turn, only the protected tail
      // (five messages, widened to whole turns: three) stays, plus this turn's two rows
      expect(read.messages).toHaveLength(6 + 2);
    }
    // one history.compacted@1 per compaction, each with its barrier end in the turn that compacted
    const events = await h.events(session.sessionId);
    const passed = of(events, 'compaction.barrier-passed@1');
    expect(passed.map((p) => p.outcome)).toEqual(passed.map(() => 'compacted'));
    expect(passed.map((p) => p.turnId)).toEqual(compactedAt.map((i) => turnIds[i]));
    expect(of(events, 'history.compacted@1').map((c) => c.compactionId)).toEqual(passed.map((p) => p.compactionId));
    expect(compactedAt.length).toBeGreaterThanOrEqual(5);

    // no message lost from the log: every input and its story are rows, in order, compacted or not
    const messages = await h.deps.readModels.messages(session.tenantId, session.sessionId);
    expect(messages).toHaveLength(2 * TURNS);
    expect(messages.filter((m) => m.role === 'user').map((m) => m.text)).toEqual(inputs);
    expect(messages.map((m) => m.turnId)).toEqual(turnIds.flatMap((t) => [t, t]));

    // audit byte-identical across compactions: the turns around each compaction, the first and the last
    const sample = new Set([0, 1, TURNS - 1, ...compactedAt.flatMap((i) => [i - 1, i, i + 1])].filter((i) => i >= 0 && i < TURNS));
    for (const i of [...sample].sort((a, b) => a - b)) {
      const audit = await auditTurn({ ...h.deps, historyReadLimit: bound }, session.sessionId, turnIds[i]);
      expect({ turn: i + 1, identical: audit.identical, calls: audit.calls.length > 0 }).toEqual({ turn: i + 1, identical: true, calls: true });
    }

    // replay identical
    await expectReplayIdentical(h, session);
  }, 900_000);
});
