import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { prefixReport } from '../libs/reports';
import { startEmbedded } from '../test/support/embedded';
import { SMALL_WINDOW_LLM } from '../test/support/small-window-llm';

const MOVES = [
  'I look around the flooded archive and read the spines of the nearest shelf aloud.',
  'I wade to the reading desk and open the ledger the wardens left behind.',
  'I ask the archivist what happened to the lower stacks the night the river rose.',
  'I follow the trail of wet footprints toward the map room and listen at the door.',
  'I light the last lantern and search the drawers of the cartographer’s cabinet.',
  'I copy the faded names from the flood register into my own notebook.',
  'I climb the ladder to the gallery and look down over the whole hall.',
  'I take the brass key from the hook and try it on the sealed reliquary.',
];

export interface CompactionTurnRow {
  turn: number;
  /** The story runtime's first request of the turn, estimated from characters. */
  promptTokens: number;
  /** Provider-reported (emulated) input and cached input tokens of that request. */
  inputTokens: number | null;
  cachedTokens: number | null;
  /** The barrier compacted in this turn (before this request). */
  compacted: boolean;
}

export interface CompactionBenchResult {
  turns: number;
  window: { contextWindow: number; effective: number; threshold: number | null };
  rows: CompactionTurnRow[];
  compactions: number;
  /** Turns that compacted (1-based). */
  compactionTurns: number[];
  /** Per compaction: the story request's prompt tokens the turn before it and in its turn (after it). */
  sawtooth: { turn: number; before: number; after: number }[];
  /** Per compaction: summary segments stored after it, segments it added, old segments it merged away. */
  segments: { turn: number; stored: number; added: number; merged: number }[];
  /**
   * Per interval from one compaction to the next (the last to the end): mean and peak prompt tokens.
   * "Flat after the first compaction": these stay level over the session instead of growing with it.
   */
  intervals: { from: number; to: number; mean: number; peak: number }[];
  /** Prompt tokens from the first compacted turn on. */
  afterFirstCompaction: { min: number; max: number; mean: number } | null;
  /** Cached / input tokens over the story's first requests that are not the first after a compaction (turn 1 excluded). */
  cacheShareBetweenCompactions: number;
  /** Same over the first requests right after a compaction. */
  cacheShareAfterCompaction: number;
}

type Data = Record<string, unknown>;

/**
 * Issue 12: a long session on the emulator with a small window (story and fast slot 8k) and the
 * repository's default plugins (narrator, history-compaction). Per turn, the story runtime's first
 * request: its size, the emulated provider's cached tokens, and whether the barrier compacted.
 */
export async function runCompactionBench(turns: number, log: (line: string) => void): Promise<CompactionBenchResult> {
  const llmDir = mkdtempSync(join(tmpdir(), 'covel-bench-llm-'));
  const llmFile = join(llmDir, 'llm.toml');
  writeFileSync(llmFile, SMALL_WINDOW_LLM);
  const covel = await startEmbedded({ COVEL_LLM_CONFIG: llmFile });
  try {
    const client = await covel.newTenant('bench');
    const { id } = await client.createSession();
    const turnIds: string[] = [];
    for (let t = 0; t < turns; t++) {
      const { executionId, turnId } = await client.submit(id, `${MOVES[t % MOVES.length]} (${t + 1})`);
      await client.waitFor(executionId, 60_000);
      turnIds.push(turnId);
      if ((t + 1) % 50 === 0) log(`  played ${t + 1}/${turns} turns`);
    }
    await covel.engine.projector.waitFor({ projection: 'trace_events', streamId: id, timeoutMs: 10_000 });
    const events = await covel.engine.store.readStream(id);
    const usage = new Map<string, { inputTokens: number; cachedInputTokens: number }>();
    const compactedTurns = new Set<string>();
    const stored = new Set<string>();
    /** compactionId of the turn that compacted. */
    const compactionOf = new Map<string, string>();
    const byCompaction = new Map<string, { added: number; merged: number; stored: number }>();
    let threshold: number | null = null;
    let effective = 0;
    for (const e of events) {
      const data = e.data as Data;
      if (e.type === 'llm.responded@1') usage.set(data.callId as string, data.usage as { inputTokens: number; cachedInputTokens: number });
      if (e.type === 'compaction.barrier-passed@1') {
        threshold = data.thresholdTokens as number;
        effective = data.triggerWindow as number;
        if (data.outcome === 'compacted') {
          compactedTurns.add(data.turnId as string);
          compactionOf.set(data.turnId as string, data.compactionId as string);
        }
      }
      if (e.type === 'history.compacted@1') {
        const summaries = data.summaries as { summaryId: string; messageIds: string[]; replacesSummaryIds: string[] }[];
        let merged = 0;
        for (const s of summaries) {
          // a merge keeps the oldest replaced id: the others leave the store
          for (const old of s.replacesSummaryIds) if (old !== s.summaryId && stored.delete(old)) merged++;
          stored.add(s.summaryId);
        }
        byCompaction.set(data.compactionId as string, { added: summaries.filter((s) => s.messageIds.length > 0).length, merged, stored: stored.size });
      }
    }
    const story = prefixReport(await covel.engine.readModels.recordedCalls(id)).filter((r) => r.runtime === 'narrator/narrator');
    const byTurn = new Map(story.map((r) => [r.turnId, r]));
    const rows: CompactionTurnRow[] = turnIds.map((turnId, i) => {
      const r = byTurn.get(turnId);
      const u = r ? usage.get(r.callId) : undefined;
      return {
        turn: i + 1,
        promptTokens: r?.requestTokens ?? 0,
        inputTokens: u?.inputTokens ?? null,
        cachedTokens: u?.cachedInputTokens ?? null,
        compacted: compactedTurns.has(turnId),
      };
    });
    const compactionTurns = rows.filter((r) => r.compacted).map((r) => r.turn);
    const after = compactionTurns.length > 0 ? rows.slice(compactionTurns[0] - 1).map((r) => r.promptTokens) : [];
    const share = (selected: CompactionTurnRow[]) => {
      const input = selected.reduce((n, r) => n + (r.inputTokens ?? 0), 0);
      return input === 0 ? 0 : selected.reduce((n, r) => n + (r.cachedTokens ?? 0), 0) / input;
    };
    return {
      turns,
      window: { contextWindow: 8192, effective, threshold },
      rows,
      compactions: compactionTurns.length,
      compactionTurns,
      sawtooth: compactionTurns.map((t) => ({ turn: t, before: rows[t - 2]?.promptTokens ?? 0, after: rows[t - 1].promptTokens })),
      segments: compactionTurns.map((t) => {
        const c = byCompaction.get(compactionOf.get(turnIds[t - 1]) ?? '') ?? { added: 0, merged: 0, stored: 0 };
        return { turn: t, ...c };
      }),
      intervals: compactionTurns.map((from, k) => {
        const to = (compactionTurns[k + 1] ?? turns + 1) - 1;
        const tokens = rows.slice(from - 1, to).map((r) => r.promptTokens);
        return { from, to, mean: Math.round(tokens.reduce((a, b) => a + b, 0) / tokens.length), peak: Math.max(...tokens) };
      }),
      afterFirstCompaction:
        after.length === 0 ? null : { min: Math.min(...after), max: Math.max(...after), mean: Math.round(after.reduce((a, b) => a + b, 0) / after.length) },
      cacheShareBetweenCompactions: share(rows.filter((r) => r.turn > 1 && !r.compacted)),
      cacheShareAfterCompaction: share(rows.filter((r) => r.compacted)),
    };
  } finally {
    await covel.stop();
    rmSync(llmDir, { recursive: true, force: true });
  }
}
