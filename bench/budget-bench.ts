import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BudgetStats } from '../libs/context';
import { ProviderEmulator } from '../libs/emulator';
import { startEmbedded } from '../test/support/embedded';
import { TOOL_HEAVY_LLM, toolHeavyInput, toolHeavyScript } from '../test/support/tool-heavy-session';

const PLUGINS = join(__dirname, '..', 'test', 'fixtures', 'budget-plugins');

type Data = Record<string, unknown>;
export interface BudgetTurnRow {
  turn: number;
  requests: number;
  /** Requests sent smaller than they were built (the ledger replayed, or new trimming). */
  trimmed: number;
  /** Estimated tokens before and after the budget, over the turn's requests. */
  before: number;
  after: number;
  inputTokens: number;
  cachedTokens: number;
}

export interface BudgetBenchResult {
  turns: number;
  shelvesPerTurn: number;
  inputLimit: number;
  rows: BudgetTurnRow[];
  requests: number;
  requestsTrimmed: number;
  tokensBefore: number;
  tokensAfter: number;
  /** Estimated tokens the budget kept out of the requests. */
  tokensSaved: number;
  /** Largest request sent (estimated): never above the input limit. */
  largestSent: number;
  /** Emulated provider: cached / input tokens over all requests, and over the requests after the first of each turn. */
  cacheShare: number;
  cacheShareWithinTurns: number;
  failedTurns: number;
}

/**
 * Issue 13: a tool-heavy session on a small window with trimming on. Each turn the narrator calls
 * `search-archive` `shelves` times (~540 tokens per result) before it writes; the budget elides and
 * collapses old results (and prunes history) so every request stays under the input limit.
 */
export async function runBudgetBench(turns: number, shelves: number, log: (line: string) => void): Promise<BudgetBenchResult> {
  const emulator = await new ProviderEmulator({ script: toolHeavyScript(shelves) }).start();
  const llmDir = mkdtempSync(join(tmpdir(), 'covel-bench-llm-'));
  writeFileSync(join(llmDir, 'llm.toml'), TOOL_HEAVY_LLM);
  const covel = await startEmbedded({ COVEL_PLUGINS_DIR: PLUGINS, COVEL_EMULATOR_URL: emulator.url, COVEL_LLM_CONFIG: join(llmDir, 'llm.toml') });
  try {
    const client = await covel.newTenant('bench');
    const { id } = await client.createSession();
    const turnIds: string[] = [];
    let failedTurns = 0;
    for (let t = 0; t < turns; t++) {
      const { executionId, turnId } = await client.submit(id, toolHeavyInput(t + 1));
      if ((await client.waitFor(executionId, 120_000)) !== 'committed') failedTurns++;
      turnIds.push(turnId);
      if ((t + 1) % 10 === 0) log(`  played ${t + 1}/${turns} turns`);
    }
    const events = await covel.engine.store.readStream(id);
    const usage = new Map<string, { inputTokens: number; cachedInputTokens: number }>();
    for (const e of events)
      if (e.type === 'llm.responded@1')
        usage.set((e.data as Data).callId as string, (e.data as Data).usage as { inputTokens: number; cachedInputTokens: number });
    const calls = events.filter((e) => e.type === 'llm.calling@1').map((e) => e.data as Data & { budget?: { stats: BudgetStats } });
    let inputLimit = 0;
    let largestSent = 0;
    const rows = turnIds.map((turnId, i): BudgetTurnRow => {
      const ofTurn = calls.filter((c) => c.turnId === turnId);
      const row = { turn: i + 1, requests: ofTurn.length, trimmed: 0, before: 0, after: 0, inputTokens: 0, cachedTokens: 0 };
      for (const c of ofTurn) {
        const s = c.budget?.stats;
        if (s) {
          inputLimit = s.inputLimit;
          largestSent = Math.max(largestSent, s.after);
          row.before += s.before;
          row.after += s.after;
          if (s.after < s.before) row.trimmed++;
        }
        const u = usage.get(c.callId as string);
        row.inputTokens += u?.inputTokens ?? 0;
        row.cachedTokens += u?.cachedInputTokens ?? 0;
      }
      return row;
    });
    const firstOfTurn = new Set(turnIds.map((t) => calls.find((c) => c.turnId === t)?.callId as string));
    const within = calls.filter((c) => !firstOfTurn.has(c.callId as string)).map((c) => usage.get(c.callId as string));
    const sum = (f: (r: BudgetTurnRow) => number) => rows.reduce((n, r) => n + f(r), 0);
    const withinInput = within.reduce((n, u) => n + (u?.inputTokens ?? 0), 0);
    return {
      turns,
      shelvesPerTurn: shelves,
      inputLimit,
      rows,
      requests: sum((r) => r.requests),
      requestsTrimmed: sum((r) => r.trimmed),
      tokensBefore: sum((r) => r.before),
      tokensAfter: sum((r) => r.after),
      tokensSaved: sum((r) => r.before - r.after),
      largestSent,
      cacheShare:
        sum((r) => r.cachedTokens) /
        Math.max(
          1,
          sum((r) => r.inputTokens),
        ),
      cacheShareWithinTurns: within.reduce((n, u) => n + (u?.cachedInputTokens ?? 0), 0) / Math.max(1, withinInput),
      failedTurns,
    };
  } finally {
    await covel.stop();
    await emulator.stop();
    rmSync(llmDir, { recursive: true, force: true });
  }
}
