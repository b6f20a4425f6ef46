import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  BENCHMARKS_DOC,
  renderBudget,
  renderCompaction,
  renderContext,
  renderContextPlugins,
  renderEmberback,
  renderLoad,
  renderLoadSuite,
  renderNoisy,
  staticBenchBlocks,
  type EmberbackJson,
  type LoadJson,
} from '../../bench/bench-docs';
import type { NoisyResult } from '../../bench/load/noisy';
import { NOISY_DOCS_RESULTS_FILE, type NoisyJson, noisyVerdicts } from '../../bench/load/noisy-report';
import { DOCS_RESULTS_FILE } from '../../bench/load/report';
import { verdictExitCode } from '../../bench/verdicts';
import { ACCEPTANCE_SUITE, NOISY_SCENARIO } from '../../bench/load/options';
import type { RunResult } from '../../bench/load/run';
import { emptyCounts, turnCounts } from '../../bench/load/counts';
import { readBlock, renderBlocks } from '../../tools/docs-block';

const spread = (p50: number, p95: number) => ({ p50, p95, max: p95 });
const cpu = { total: 45.2, api: 7.1, workers: 22.4, emulator: 2, postgres: 11.3, redis: 2.4, postgresBenchDb: 9 };

function run(name: string, over: Partial<RunResult['log']> = {}): RunResult {
  const spec = ACCEPTANCE_SUITE.find((r) => r.name === name)!;
  const turns = spec.sessions * spec.inputs;
  return {
    spec,
    startedAt: '2026-12-05T06:00:00.000Z',
    setupMs: 1000,
    windowMs: 10_000,
    turns: { expected: turns, committed: turns, failed: 0, errors: 0 },
    log: { committed: turns, failed: 0, duplicated: 0, outOfOrder: 0, missing: 0, ...over } as RunResult['log'],
    modelCallsPerTurn: 1,
    turnsPerSecond: 25.84,
    idealTurnsPerSecond: 64,
    efficiencyPercent: 40.4,
    latencyMs: spread(2100, 3000),
    serverLatencyMs: spread(2000, 2900),
    overheadMs: spread(1100, 2049.6),
    serverOverheadMs: spread(1000, 1900),
    stepsMs: {} as RunResult['stepsMs'],
    pollsPerTurn: 1,
    cpuMs: cpu,
    cpuMsPerTurn: cpu,
    counts: turnCounts({
      turns,
      api: emptyCounts(),
      workers: [],
      emulatorHost: '127.0.0.1:1',
      clientRequests: turns,
      cpuMs: cpu,
      logBytes: { json: 0, stored: 0, events: 0 },
    }),
    loadAverage: { start: 1.5, end: 3.25 },
    crashed: [],
    errorSamples: [],
  };
}

const clean = { committed: 80, failed: 0, duplicated: 0, outOfOrder: 0, missing: 0 };

/** A noisy-neighbour run: B at `aloneP95` ms alone and `floodP95` ms with the flood; A's log as given. */
function noisy(aloneP95: number, floodP95: number, floodLog: Partial<NoisyResult['flood']['log']> = {}): NoisyResult {
  const phase = (p95: number): NoisyResult['alone'] => ({
    turns: { expected: 80, committed: 80, failed: 0, errors: 0, retries: 0, rateLimited: 0 },
    log: clean,
    windowMs: 9_000,
    latencyMs: spread(p95 / 2, p95),
    serverLatencyMs: spread(p95 / 2 - 50, p95 - 50),
    queuedMs: spread(10, 20),
    loadAverage: { start: 2, end: 2.5 },
    errorSamples: [],
  });
  return {
    spec: NOISY_SCENARIO,
    startedAt: '2026-12-05T06:00:00.000Z',
    setupMs: 1000,
    alone: phase(aloneP95),
    withFlood: phase(floodP95),
    flood: {
      turns: { expected: 2000, posted: 2000, errors: 0, retries: 0, rateLimited: 0 },
      log: { ...clean, committed: 2000, ...floodLog },
      startedMs: 300,
      postedMs: 1500,
      windowMs: 100_000,
      turnsPerSecond: 20,
      serverLatencyMs: spread(4000, 9000),
      queuedMs: spread(3500, 8000),
      loadAverage: { start: 3, end: 4 },
      errorSamples: [],
    },
    playerTurnsDuringFlood: 80,
    ratio: { p50: floodP95 / aloneP95, p95: floodP95 / aloneP95 },
    crashed: [],
  };
}

describe('docs/benchmarks.md blocks (bench/bench-docs.ts)', () => {
  it('renders one load row per run from the results, exactly-once or not', () => {
    const json: LoadJson = {
      date: '2026-12-05T06:01:00.000Z',
      node: 'v20.0.0',
      suite: 'acceptance',
      cores: 2,
      cpu: 'Test CPU',
      scaleOutRatioCOverB: null,
      runs: [run('a'), run('b', { duplicated: 1 })],
    };
    const text = renderLoad(json);
    expect(text).toContain('| a | 64 × 5 | 2 × 32 | 1 s | 25.8 | 64 | 40 % | 1,100 / 2,050 | 45 | yes (320 turns) |');
    expect(text).toContain('| b | 64 × 5 | 1 × 16 | 1 s | 25.8 | 64 | 40 % | 1,100 / 2,050 | 45 | **no** |');
    expect(text).toContain('Measured 2026-12-05, Node v20.0.0, 2 cores (Test CPU).');
  });

  it("keeps the table of load runs equal to the acceptance suite's settings (else: BENCH_ONLY=none npm run bench -- --write-docs)", async () => {
    const text = readFileSync(BENCHMARKS_DOC, 'utf8');
    expect(renderLoadSuite()).toContain('| e | 200 × 10 | 2 × 32 | 1 s | exactly once at 2,000 turns |');
    const current = (await renderBlocks(BENCHMARKS_DOC, text, staticBenchBlocks())) === text;
    if (!current) throw new Error(`${readBlock(text, 'bench:load-suite')}\nis stale: run BENCH_ONLY=none npm run bench -- --write-docs`);
  });

  it('every measured block is the rendering of the JSON result committed beside it (bench/results/<name>.json, load.json)', async () => {
    const results = join(__dirname, '..', '..', 'bench', 'results');
    const read = <T>(file: string) => JSON.parse(readFileSync(file, 'utf8')) as T;
    const blocks = [
      { marker: 'bench:context', content: renderContext(read(join(results, 'context.json'))) },
      { marker: 'bench:context-plugins', content: renderContextPlugins(read(join(results, 'context-plugins.json'))) },
      { marker: 'bench:emberback', content: renderEmberback(read(join(results, 'emberback.json'))) },
      { marker: 'bench:compaction', content: renderCompaction(read(join(results, 'compaction.json'))) },
      { marker: 'bench:budget', content: renderBudget(read(join(results, 'budget.json'))) },
      { marker: 'bench:load', content: renderLoad(read(DOCS_RESULTS_FILE)) },
      { marker: 'bench:load-noisy', content: renderNoisy(read(NOISY_DOCS_RESULTS_FILE)) },
    ];
    expect(existsSync(DOCS_RESULTS_FILE)).toBe(true);
    const text = readFileSync(BENCHMARKS_DOC, 'utf8');
    // the machine is named by the writer's process (`N cores (CPU)`, a model name may hold parentheses: `Intel(R) Xeon(R)`): the figures are compared, not the machine reading them
    const machineless = (t: string) => t.replace(/\d+ cores \((?:[^()]|\([^()]*\))*\)/g, 'N cores (CPU)');
    expect(machineless(await renderBlocks(BENCHMARKS_DOC, text, blocks))).toBe(machineless(text));
  });

  it('states the Emberback bound and cache-read share both overall and from turn 2 (the steady state)', () => {
    const json = JSON.parse(readFileSync(join(__dirname, '..', '..', 'bench', 'results', 'emberback.json'), 'utf8')) as EmberbackJson;
    const text = renderEmberback(json);
    expect(json.steadyLayoutBound).toBeGreaterThan(json.layoutBound);
    expect(text).toContain(`from turn 2 on: **${(json.steadyLayoutBound! * 100).toFixed(1)} %**`);
    expect(text).toContain(
      `from turn 2 on (steady state, ${json.steadyCalls!.toLocaleString('en-US')} calls): **${(json.steadyCachedShare! * 100).toFixed(1)} %**`,
    );
    expect(text).toContain('| bound from turn 2 |');
  });

  it('judges the steady-state share against the target and states the tokens and est. $ per turn beside it', () => {
    const json = JSON.parse(readFileSync(join(__dirname, '..', '..', 'bench', 'results', 'emberback.json'), 'utf8')) as EmberbackJson;
    const under = renderEmberback({ ...json, cachedShare: 0.95, steadyCachedShare: 0.885 });
    expect(under).toMatch(
      /from turn 2 on \(steady state, [\d,]+ calls\): \*\*88\.5 %\*\* \(target ≥ 90\.0 %: not reached\); over all [\d,]+ calls, the cold first turn counted: 95\.0 %/,
    );
    expect(renderEmberback({ ...json, cachedShare: 0.85, steadyCachedShare: 0.905 })).toContain('**90.5 %** (target ≥ 90.0 %: reached)');
    const t = json.steadyPerTurn!;
    expect(t.fromTurn).toBe(2);
    expect(under).toContain(
      `input **${Math.round(t.inputTokens).toLocaleString('en-US')}** (cached ${Math.round(t.cachedTokens).toLocaleString('en-US')}, uncached **`,
    );
    expect(under).toContain(`(from turn 2 on $${json.cost!.steadyMeanPerTurnUsd!.toFixed(6)})`);
  });
});

describe('bench:load --scenario noisy: verdicts and docs block', () => {
  it("B's p95 ratio passes at 1.5x and fails above; A or B not exactly once fails whatever the ratio", () => {
    expect(noisyVerdicts(noisy(1000, 1500)).map((v) => v.ok)).toEqual([true, true, true]);
    const over = noisyVerdicts(noisy(1000, 1510));
    expect(over.map((v) => v.ok)).toEqual([false, true, true]);
    expect(over[0].target).toBe("B's p95 with A's flood / alone = 1.51x (1,510 / 1,000 ms), target <= 1.5x");
    expect(noisyVerdicts(noisy(1000, 1000, { outOfOrder: 2 })).map((v) => v.ok)).toEqual([true, false, true]);
    expect(noisyVerdicts(noisy(1000, 1000, { committed: 1999, missing: 1 }))[1]).toMatchObject({ ok: false, target: expect.stringContaining('(1,999/2,000)') });
    const lost = noisy(1000, 1000);
    lost.withFlood.turns.errors = 1;
    expect(noisyVerdicts(lost).map((v) => v.ok)).toEqual([true, true, false]);
    const nothing = noisy(1000, 1000);
    nothing.ratio.p95 = null;
    expect(noisyVerdicts(nothing)[0].ok).toBe(false);
  });

  it('renders both phases of B, A, the ratio and the commit measured', () => {
    const run = noisy(1000, 4400, { outOfOrder: 3 });
    const json: NoisyJson = {
      name: 'noisy',
      date: '2026-12-05T06:01:00.000Z',
      node: 'v20.0.0',
      cores: 2,
      cpu: 'Test CPU',
      commit: 'abc1234',
      verdicts: noisyVerdicts(run),
      run,
    };
    const text = renderNoisy(json);
    expect(text).toContain('| alone | 80 / 80 | 500 / 1,000 | 10 / 20 | 2.0 / 2.5 |');
    expect(text).toContain('| with A flooding | 80 / 80 | 2,200 / 4,400 | 10 / 20 | 2.0 / 2.5 |');
    expect(text).toContain('| 200 × 10 | **no** (2,000 / 2,000, 0 dup, 3 out of order, 0 lost, 0 refused) | 100.0 | 20.0 | 4,000 / 9,000 | 3.0 / 4.0 |');
    expect(text).toContain('p95 **4.40×** (target ≤ 1.5×: missed)');
    expect(text).toContain('Commit abc1234. Measured 2026-12-05, Node v20.0.0, 2 cores (Test CPU).');
  });
});

describe('npm run bench verdicts (bench/verdicts.ts)', () => {
  const lines: string[] = [];
  const log = (l: string) => lines.push(l);
  beforeEach(() => (lines.length = 0));
  const missed = [
    { bench: 'context', target: 'ratio 1.02 <= 1.5', ok: true },
    { bench: 'emberback', target: 'share 85.2% >= 90%', ok: false },
  ];

  it('a missed target is exit code 1 and says which; all met, or none stated, is 0', () => {
    expect(verdictExitCode(missed, { enforce: true, log })).toBe(1);
    expect(lines.join('\n')).toMatch(/MISSED emberback: share 85\.2% >= 90%[\s\S]*exit code 1 \(--no-verdict to skip\)/);
    expect(verdictExitCode([missed[0]], { enforce: true, log })).toBe(0);
    expect(verdictExitCode([], { enforce: true, log })).toBe(0);
  });

  it('--no-verdict (enforce: false) prints the verdicts and exits 0', () => {
    expect(verdictExitCode(missed, { enforce: false, log })).toBe(0);
    expect(lines.join('\n')).toContain('MISSED emberback');
  });
});
