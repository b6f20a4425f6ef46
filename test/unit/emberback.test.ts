import { CacheBound, type EmberbackResult, perTurn, runEmberback, sharedBound } from '../../bench/emberback-bench';
import { estimateTokens } from '../../libs/text';
import { type PrefixRow } from '../../libs/reports';

/** Turn numbers grouped by a key, in turn order (consecutive or not). */
function groupBy<T>(items: readonly T[], key: (t: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) groups.set(key(item), [...(groups.get(key(item)) ?? []), item]);
  return groups;
}

const ROSTER = /<existing-characters>[\s\S]*?<\/existing-characters>/;

describe('Emberback with every plugin it lists, 20 turns on the emulator', () => {
  let result: EmberbackResult;
  beforeAll(async () => {
    result = await runEmberback(20, () => undefined);
  }, 240_000);

  it('runs the plugins the world lists, each auto runtime in every turn; every turn’s audit is byte-identical', () => {
    expect(result.plugins.length).toBeGreaterThan(2);
    expect(result.plugins).toEqual(expect.arrayContaining(['narrator', 'history-compaction']));
    const turnsByRuntime = groupBy(result.systemPrompts, (p) => p.runtime);
    for (const [runtime, prompts] of turnsByRuntime) expect([runtime, prompts.length]).toEqual([runtime, 20]);
    expect(result.auditIdentical).toBe(true);
  });

  it('the plugins are at work on the emulator (the world’s reply book): dimensions, characters, memory, affinity, codex, relations, the clock and facts are written', () => {
    for (const plugin of ['world-init', 'char-creator', 'memory', 'affinity', 'codex', 'npc-graph', 'world-time', 'world-ir'])
      expect([plugin, (result.writesByPlugin[plugin] ?? 0) > 0]).toEqual([plugin, true]);
    // the salt-trader was created once (turn 9): the roster changed, and the prompts that show it with it
    const rosters = new Set(result.systemPrompts.filter((p) => p.runtime === 'char-creator/character-tracker').map((p) => ROSTER.exec(p.system)?.[0]));
    expect(rosters.size).toBe(2);
  });

  it("the narrator's system prompt is byte-identical across all 20 turns; each turn's request shares the history up to the previous turn", () => {
    const narrator = result.systemPrompts.filter((p) => p.runtime === 'narrator/narrator');
    expect(narrator).toHaveLength(20);
    expect(new Set(narrator.map((p) => p.system)).size).toBe(1);
    // what differs is the previous turn's turn context (character sheets, memory, dimensions, clock), never the system prompt
    for (const r of result.rows.filter((row) => row.runtime === 'narrator/narrator').slice(1)) expect(r.firstDifference?.messageIndex).toBeGreaterThan(0);
  });

  it('every bookkeeping runtime’s system prompt is byte-identical across the turns in which the roster did not change', () => {
    // the roster as the character tracker saw it at each turn (none without char-creator)
    const rosterAt = new Map<number, string>();
    for (const p of result.systemPrompts) {
      const roster = ROSTER.exec(p.system)?.[0];
      if (roster !== undefined) rosterAt.set(p.turn, roster);
    }
    for (const [runtime, prompts] of groupBy(
      result.systemPrompts.filter((p) => p.runtime !== 'narrator/narrator'),
      (p) => p.runtime,
    )) {
      for (const [, sameRoster] of groupBy(prompts, (p) => rosterAt.get(p.turn) ?? '')) {
        const distinct = [...new Set(sameRoster.map((p) => p.system))];
        expect([runtime, distinct.length]).toEqual([runtime, 1]);
      }
    }
  });

  it('prices every turn: the est. $ per turn the bench prints, from the recorded usage at the built-in list prices', () => {
    const { cost } = result;
    expect(cost.meanPerTurnUsd).toBeGreaterThan(0);
    expect(cost.maxPerTurnUsd).toBeGreaterThanOrEqual(cost.medianPerTurnUsd!);
    expect(cost.totalUsd).toBeCloseTo(cost.meanPerTurnUsd! * 20, 8);
    // both slots of llm.toml, each with a dated price
    expect(cost.prices.map((p) => [p.model, p.asOf])).toEqual([
      ['gpt-4.1-mini', expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/)],
      ['gpt-4.1-nano', expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/)],
    ]);
  });
});

describe('the layout bound the bench prints', () => {
  const row = (requestTokens: number, sharedTokens: number | null): PrefixRow =>
    ({ requestTokens, sharedTokens, sharedPercent: sharedTokens === null ? null : (100 * sharedTokens) / requestTokens }) as PrefixRow;
  it("is the shared tokens over all the first requests' tokens; a runtime's first turn shares nothing", () => {
    expect(sharedBound([row(100, null), row(200, 150), row(300, 270)])).toBeCloseTo(420 / 600, 10);
    expect(sharedBound([])).toBe(0);
  });

  it('from turn 2 on (the steady state) leaves out the cold first turn', () => {
    const at = (turn: number, requestTokens: number, sharedTokens: number | null) => ({ ...row(requestTokens, sharedTokens), turn }) as PrefixRow;
    const rows = [at(1, 100, null), at(2, 200, 150), at(3, 300, 270)];
    expect(sharedBound(rows)).toBeCloseTo(420 / 600, 10);
    expect(sharedBound(rows, { fromTurn: 2 })).toBeCloseTo(420 / 500, 10);
  });
});

describe('the tokens per turn the bench prints', () => {
  it('are the means over the turns counted; uncached is input less cached', () => {
    expect(perTurn({ calls: 20, inputTokens: 2001, cachedTokens: 1500, outputTokens: 300 }, { fromTurn: 2, turns: 2 })).toEqual({
      fromTurn: 2,
      turns: 2,
      calls: 10,
      inputTokens: 1000.5,
      cachedTokens: 750,
      uncachedTokens: 250.5,
      outputTokens: 150,
    });
    expect(perTurn({ calls: 0, inputTokens: 0, cachedTokens: 0 }, { fromTurn: 2, turns: 0 })).toMatchObject({ inputTokens: 0, outputTokens: 0 });
  });

  it('split the uncached tokens into new (no earlier request had them) and left out by the cache steps (shared, not read)', () => {
    expect(perTurn({ calls: 20, inputTokens: 2000, cachedTokens: 1500, sharedTokens: 1800, outputTokens: 0 }, { fromTurn: 2, turns: 2 })).toMatchObject({
      uncachedTokens: 250,
      newTokens: 100,
      stepLossTokens: 150,
    });
  });
});

describe('the cache bound the bench prints beside the share', () => {
  it("counts, per request, the tokens an earlier request under the same cache key had from the first byte, in the emulator's wire text (no minimum, no steps); other keys share nothing; Anthropic (breakpoints) has no such bound", () => {
    const system = { role: 'system', content: 'You keep the codex. '.repeat(50) };
    const chat = (key: string, user: string) => ({
      provider: 'openai-chat',
      model: 'gpt-4.1-nano',
      body: JSON.stringify({ model: 'gpt-4.1-nano', prompt_cache_key: key, messages: [system, { role: 'user', content: user }] }),
    });
    const bound = new CacheBound();
    expect(bound.shared(chat('a', 'first turn'))).toBe(0);
    const prefix = `[]${JSON.stringify(system)}{"role":"user","content":"`;
    expect(bound.shared(chat('a', 'second turn'))).toBe(estimateTokens(prefix));
    expect(bound.shared(chat('b', 'second turn'))).toBe(0);
    expect(bound.shared({ provider: 'anthropic', model: 'claude-sonnet-4-5', body: '{"messages":[]}' })).toBeNull();
  });
});
