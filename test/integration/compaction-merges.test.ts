import { compactionLimits, estimateTokens } from '../../libs/context';
import { llmToml } from '../support/llm-toml';
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

/** A 4k story and fast model: effective window 3,072 (the story slot after its reserve), so the summaries' total budget is tight. */
const TINY_WINDOW_LLM = llmToml({ story: { contextWindow: 4096, maxOutputTokens: 1024 }, fast: { contextWindow: 4096, maxOutputTokens: 512 } });
const EFFECTIVE_WINDOW = 4096 - 1024;
const TURNS = 120;

/**
 * Issue 12: the 300-turn session (compaction-300-turns.test.ts) stays under the summaries' budget
 * and never merges; on a 4k window the default plugin must merge the oldest segments to keep all
 * summaries within 12 % of the effective window and the eight-segment cap, in a real session.
 */
describe('a long session on a 4k window: the default plugin merges old summary segments', () => {
  let h: TurnHarness;
  beforeAll(async () => {
    h = await smallWindowHarness(TINY_WINDOW_LLM);
  });
  afterAll(() => h.close());

  it('merges the oldest segments when the total budget requires it; markers and summaries agree; audit and replay exact', async () => {
    const session = await h.session();
    const bound = historyReadLimit(h.deps);
    const limits = compactionLimits(EFFECTIVE_WINDOW);
    const turnIds: string[] = [];
    const compactedAt: number[] = [];
    let compactedRows = 0;
    for (let i = 0; i < TURNS; i++) {
      const job = await playTurn(h, session, `Turn ${i + 1}: I take the lantern down the flooded stair and count the steps. `.repeat(1 + (i % 3)));
      turnIds.push(job.turnId);
      const read = await loadRuntimeHistory(h.deps.readModels, session.tenantId, session.sessionId, bound, { withCoverage: true });
      if (read.stats.compacted === compactedRows) continue;
      compactedAt.push(i);
      compactedRows = read.stats.compacted;
      // the summaries (merged ones included) cover exactly the compacted prefix, in order
      await expectSummariesCoverCompactedPrefix(h, session, read);
      expect(read.summaries.length).toBeLessThanOrEqual(limits.maxSegments);
      expect(read.summaries.reduce((n, s) => n + estimateTokens(s.content), 0)).toBeLessThanOrEqual(limits.totalTokens);
    }
    const events = await h.events(session.sessionId);
    const compactions = of(events, 'history.compacted@1') as { summaries: { summaryId: string; messageIds: string[]; replacesSummaryIds: string[] }[] }[];
    const merges = compactions.flatMap((c) => c.summaries.filter((s) => s.replacesSummaryIds.length > 0));
    expect(compactedAt.length).toBeGreaterThanOrEqual(4);
    expect(merges.length).toBeGreaterThan(0);
    // a merge keeps the oldest replaced segment's id and covers no new messages
    for (const m of merges) {
      expect(m.summaryId).toBe(m.replacesSummaryIds[0]);
      expect(m.messageIds).toEqual([]);
    }
    expect(of(events, 'compaction.barrier-passed@1').every((p) => p.outcome === 'compacted')).toBe(true);

    const sample = new Set(compactedAt.flatMap((i) => [i - 1, i, i + 1]).filter((i) => i >= 0 && i < TURNS));
    for (const i of [...sample].sort((a, b) => a - b)) {
      const audit = await auditTurn({ ...h.deps, historyReadLimit: bound }, session.sessionId, turnIds[i]);
      expect({ turn: i + 1, identical: audit.identical }).toEqual({ turn: i + 1, identical: true });
    }
    await expectReplayIdentical(h, session);
  }, 600_000);
});
