import { type PlayClient } from '../apps/play/play-client';
import { AutomaticPrefixCache, automaticCacheText } from '../libs/emulator';
import type { StoredEvent } from '../libs/events';
import { auditTurn, DEFAULT_HISTORY_READ_LIMIT } from '../libs/engine';
import { type PriceTable, roundUsd } from '../libs/providers';
import { prefixReport, type PrefixRow, turnCosts } from '../libs/reports';
import { startEmbedded } from '../test/support/embedded';

const MOVES = [
  'Look around the square',
  'Walk down to the river',
  'Ask Mira about the ferry',
  'Watch the vents for a while',
  'Find the Wardens and their ledger',
  'Leave a warm stone on the path',
  'Listen for the bell',
  'Climb to the upper terrace',
  'Greet the salt-trader the caravan left behind',
];

/** Calls and their input, emulated cached and output tokens. */
export interface CallTokens {
  calls: number;
  inputTokens: number;
  cachedTokens: number;
  /** Absent in results written before it was counted. */
  outputTokens?: number;
  /**
   * Input tokens that repeat an earlier request under the same cache key from the first byte, on the
   * emulator's own text and token estimate, without its minimum and its 128-token steps (`cacheBound`):
   * the most the cache could read. Absent in results written before it was counted.
   */
  sharedTokens?: number;
}

/** Mean tokens of one Emberback turn (all its calls, every runtime) over a range of turns. */
export interface TurnTokens {
  /** The first turn counted (`STEADY_FROM_TURN`: the steady state) and how many turns. */
  fromTurn: number;
  turns: number;
  calls: number;
  inputTokens: number;
  cachedTokens: number;
  /** Input tokens not read from the cache: what the layout sends new (and the cache's steps leave out). */
  uncachedTokens: number;
  /** Of those, the tokens no earlier request had from the first byte (the layout's part; absent without `sharedTokens`). */
  newTokens?: number;
  /** And the tokens an earlier request shared that the cache's 1,024-token minimum and 128-token steps left out (absent without `sharedTokens`). */
  stepLossTokens?: number;
  outputTokens: number;
}

/** Input and emulated cached tokens of one runtime over all its calls, and over the calls from turn 2 on (`steady`). */
export interface RuntimeTokens extends CallTokens {
  runtime: string;
  /** The calls of turn 2 and later: the steady state, without the cold first turn (absent in results written before). */
  steady?: CallTokens;
}

/** The turn the steady state starts at: turn 1 is every runtime's cold start (nothing to share with). */
export const STEADY_FROM_TURN = 2;

/** Cached over input tokens (0 without input). */
export const cacheShare = (t: Pick<CallTokens, 'inputTokens' | 'cachedTokens'>) => (t.inputTokens === 0 ? 0 : t.cachedTokens / t.inputTokens);

/** The system prompt of one runtime's first request in a turn (the leading system message, as sent). */
export interface TurnSystemPrompt {
  turn: number;
  turnId: string;
  runtime: string;
  system: string;
}

/** The est. $ of the session's turns at the engine's list prices (the emulator's token counts). */
export interface EmberbackCost {
  /** Mean est. USD per turn (null: a call's model has no price). */
  meanPerTurnUsd: number | null;
  /** The same from turn 2 on (`STEADY_FROM_TURN`); absent in results written before. */
  steadyMeanPerTurnUsd?: number | null;
  medianPerTurnUsd: number | null;
  maxPerTurnUsd: number | null;
  totalUsd: number | null;
  /** The prices used, per model the session called. */
  prices: { model: string; input: number; cachedInput: number; output: number; asOf: string; source: string | null }[];
}

export interface EmberbackResult {
  turns: number;
  sessionId: string;
  /** The plugins the session ran (`session.created@1`). */
  plugins: string[];
  rows: PrefixRow[];
  narratorMinSharedPercent: number;
  /** Cached / input tokens over all calls of all runtimes. */
  cachedShare: number;
  /** The same from turn 2 on (`STEADY_FROM_TURN`): the steady state, without the cold first turn. */
  steadyCachedShare: number;
  /** Calls from turn 2 on. */
  steadyCalls: number;
  /**
   * The cache bound from turn 2 on: shared / input tokens over the same calls as `steadyCachedShare`, on
   * the same text and estimate (`CallTokens.sharedTokens`); the share can reach it only without steps.
   */
  steadyCacheBound: number;
  /** Mean tokens per turn from turn 2 on. */
  steadyPerTurn: TurnTokens;
  byRuntime: RuntimeTokens[];
  systemPrompts: TurnSystemPrompt[];
  /** Plugin-data rows written per plugin over the session (what the bookkeepers kept). */
  writesByPlugin: Record<string, number>;
  auditIdentical: boolean;
  cost: EmberbackCost;
}

/** The leading system message of a recorded request body (OpenAI Chat and Responses `messages`/`input`, Anthropic `system`, Gemini `systemInstruction`). */
export function leadingSystem(body: string): string {
  const b = JSON.parse(body) as Record<string, unknown>;
  const text = (c: unknown): string => (typeof c === 'string' ? c : Array.isArray(c) ? c.map((p: { text?: string }) => p.text ?? '').join('') : '');
  if (b.system !== undefined) return text(b.system);
  if (b.systemInstruction !== undefined) return text((b.systemInstruction as { parts?: unknown }).parts);
  const list = (b.messages ?? b.input) as { role?: string; content?: unknown }[] | undefined;
  const first = list?.[0];
  return first && (first.role === 'system' || first.role === 'developer') ? text(first.content) : '';
}

/**
 * The most any prefix cache could read of these first requests: the tokens each one shares from the first byte
 * with the same runtime's request of the previous turn, over all their tokens (a runtime's first turn shares
 * nothing). The spec's layout sends the turn context, the input, the story text and a sliding history window new
 * every turn, so they are outside this bound by construction; cache granularity and cold starts only lower it.
 * `fromTurn`: only the rows of that turn and later (`STEADY_FROM_TURN`: the steady state, where every
 * runtime has a previous request; over all turns the cold first turn counts as nothing shared).
 */
export function sharedBound(rows: readonly PrefixRow[], options: { fromTurn?: number } = {}): number {
  let request = 0;
  let shared = 0;
  for (const r of rows) {
    if (r.turn < (options.fromTurn ?? 1)) continue;
    request += r.requestTokens;
    shared += r.sharedTokens ?? 0;
  }
  return request === 0 ? 0 : shared / request;
}

/**
 * The exact shared prefix of each request: the request replayed, in log order, through the emulator's
 * automatic cache model with no minimum and 1-token steps (the same text, key and token estimate the
 * emulator bills with, `automaticCacheText`). Unlike `sharedBound` it counts every call (tool-loop steps
 * too), compares with every earlier request under the key, and counts what the wire carries (message
 * envelopes, JSON escapes), as `cachedTokens` does. Null for a protocol without an automatic cache.
 */
export class CacheBound {
  private readonly exact = new AutomaticPrefixCache({ minTokens: 0, stepTokens: 1 });

  /** Shared tokens of this request (then remembered for the next ones). */
  shared(call: { provider: string; model: string; body: string }): number | null {
    const text = automaticCacheText(call.provider, call.model, JSON.parse(call.body) as Record<string, unknown>);
    return text === null ? null : this.exact.lookup(text.key, text.prompt);
  }
}

/** A 50-turn Emberback session on the emulator: prefix report, emulated cache-read share, audit. */
export async function runEmberback(turns: number, log: (line: string) => void): Promise<EmberbackResult> {
  const covel = await startEmbedded();
  try {
    const client: PlayClient = await covel.newTenant('bench');
    const { id } = await client.createSession({ worldId: 'emberback' });
    const turnIds: string[] = [];
    for (let t = 0; t < turns; t++) {
      const { executionId, turnId } = await client.submit(id, `${MOVES[t % MOVES.length]} (${t})`);
      await client.waitFor(executionId, 30_000);
      turnIds.push(turnId);
      if ((t + 1) % 10 === 0) log(`  played ${t + 1}/${turns} turns`);
    }
    // trace_events is an async projection: wait until it has the session's last event
    await covel.engine.projector.waitFor({ projection: 'trace_events', streamId: id, timeoutMs: 10_000 });
    const calls = await covel.engine.readModels.recordedCalls(id);
    const rows = prefixReport(calls);
    const narrator = rows.filter((r) => r.runtime === 'narrator/narrator' && r.sharedPercent !== null);
    const events = await covel.engine.store.readStream(id);
    const none = (): CallTokens => ({ calls: 0, inputTokens: 0, cachedTokens: 0, outputTokens: 0, sharedTokens: 0 });
    const all = none();
    const steady = none();
    const add = (t: CallTokens, usage: { inputTokens: number; cachedInputTokens: number; outputTokens: number }, shared: number) => {
      t.calls += 1;
      t.inputTokens += usage.inputTokens;
      t.cachedTokens += usage.cachedInputTokens;
      t.outputTokens = (t.outputTokens ?? 0) + usage.outputTokens;
      t.sharedTokens = (t.sharedTokens ?? 0) + shared;
    };
    const bound = new CacheBound();
    const sharedByCall = new Map<string, number>();
    const byRuntime = new Map<string, RuntimeTokens>();
    const systemPrompts: TurnSystemPrompt[] = [];
    const turnNumber = new Map(turnIds.map((t, i) => [t, i + 1]));
    let plugins: string[] = [];
    const writesByPlugin: Record<string, number> = {};
    for (const e of events) {
      if (e.type === 'plugin-data.written@1') writesByPlugin[e.data.pluginId] = (writesByPlugin[e.data.pluginId] ?? 0) + 1;
      if (e.type === 'session.created@1') plugins = e.data.plugins ?? [];
      // every request the emulator saw, in order (a non-streaming fallback is one more request)
      if (e.type === 'llm.calling@1') {
        const shared = bound.shared(e.data) ?? 0;
        if (!sharedByCall.has(e.data.callId)) sharedByCall.set(e.data.callId, shared);
      }
      if (e.type === 'llm.calling@1' && (e.data.step ?? 1) === 1 && turnNumber.has(e.data.turnId)) {
        const runtime = `${e.data.pluginId}/${e.data.runtimeId}`;
        systemPrompts.push({ turn: turnNumber.get(e.data.turnId)!, turnId: e.data.turnId, runtime, system: leadingSystem(e.data.body) });
      }
      if (e.type === 'llm.responded@1') {
        const runtime = `${e.data.pluginId}/${e.data.runtimeId}`;
        const r = byRuntime.get(runtime) ?? { runtime, ...none(), steady: none() };
        // the shared prefix is counted once, with the answer that billed it (shared never exceeds input)
        const shared = Math.min(sharedByCall.get(e.data.callId) ?? 0, e.data.usage.inputTokens);
        add(all, e.data.usage, shared);
        add(r, e.data.usage, shared);
        if ((turnNumber.get(e.data.turnId) ?? 0) >= STEADY_FROM_TURN) {
          add(steady, e.data.usage, shared);
          add(r.steady!, e.data.usage, shared);
        }
        byRuntime.set(runtime, r);
      }
    }
    const cost = emberbackCost(events, turnIds, covel.engine.prices);
    let auditIdentical = true;
    for (const turnId of turnIds) {
      const audit = await auditTurn({ ...covel.engine, historyReadLimit: DEFAULT_HISTORY_READ_LIMIT }, id, turnId);
      auditIdentical &&= audit.identical && audit.calls.length > 0;
    }
    return {
      turns,
      sessionId: id,
      plugins,
      rows,
      narratorMinSharedPercent: Math.min(...narrator.map((r) => r.sharedPercent!)),
      cachedShare: cacheShare(all),
      steadyCachedShare: cacheShare(steady),
      steadyCalls: steady.calls,
      steadyCacheBound: steady.inputTokens === 0 ? 0 : (steady.sharedTokens ?? 0) / steady.inputTokens,
      steadyPerTurn: perTurn(steady, { fromTurn: STEADY_FROM_TURN, turns: turns - STEADY_FROM_TURN + 1 }),
      byRuntime: [...byRuntime.values()],
      systemPrompts,
      writesByPlugin,
      auditIdentical,
      cost,
    };
  } finally {
    await covel.stop();
  }
}

/** The mean of `t` over `turns` turns (0 without turns). */
export function perTurn(t: CallTokens, range: { fromTurn: number; turns: number }): TurnTokens {
  const mean = (v: number) => (range.turns <= 0 ? 0 : Math.round((v / range.turns) * 10) / 10);
  return {
    ...range,
    calls: mean(t.calls),
    inputTokens: mean(t.inputTokens),
    cachedTokens: mean(t.cachedTokens),
    uncachedTokens: mean(t.inputTokens - t.cachedTokens),
    ...(t.sharedTokens === undefined ? {} : { newTokens: mean(t.inputTokens - t.sharedTokens), stepLossTokens: mean(t.sharedTokens - t.cachedTokens) }),
    outputTokens: mean(t.outputTokens ?? 0),
  };
}

/** Per turn est. $ (the sum over a turn's answered calls, as the inspector shows it) and the prices it used. */
function emberbackCost(events: readonly StoredEvent[], turnIds: readonly string[], prices: PriceTable): EmberbackCost {
  const byTurn = turnCosts(events, prices);
  const perTurn = turnIds.map((t) => (byTurn.has(t) ? byTurn.get(t)! : 0));
  const models = [...new Set(events.flatMap((e) => (e.type === 'llm.calling@1' ? [e.data.model] : [])))].sort();
  const used = models.map((model) => {
    const p = prices.priceOf(model);
    return {
      model,
      input: p?.input ?? NaN,
      cachedInput: p?.cachedInput ?? NaN,
      output: p?.output ?? NaN,
      asOf: p?.asOf ?? '(no price)',
      source: p?.source ?? null,
    };
  });
  if (perTurn.length === 0 || perTurn.some((c) => c === null))
    return { meanPerTurnUsd: null, steadyMeanPerTurnUsd: null, medianPerTurnUsd: null, maxPerTurnUsd: null, totalUsd: null, prices: used };
  const known = perTurn as number[];
  const total = known.reduce((a, b) => a + b, 0);
  const sorted = [...known].sort((a, b) => a - b);
  const steady = known.slice(STEADY_FROM_TURN - 1);
  return {
    meanPerTurnUsd: roundUsd(total / known.length),
    steadyMeanPerTurnUsd: steady.length === 0 ? null : roundUsd(steady.reduce((a, b) => a + b, 0) / steady.length),
    medianPerTurnUsd: sorted[Math.floor(sorted.length / 2)],
    maxPerTurnUsd: sorted[sorted.length - 1],
    totalUsd: roundUsd(total),
    prices: used,
  };
}
