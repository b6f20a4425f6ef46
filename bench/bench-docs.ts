import { readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import type { PrefixRow } from '../libs/reports';
import { type DocsBlock, markdownTable, writeBlocks } from '../tools/docs-block';
import type { BudgetBenchResult } from './budget-bench';
import type { CompactionBenchResult } from './compaction-bench';
import type { ContextBenchRow } from './context-bench';
import type { ContextPluginsBench } from './context-plugins-bench';
import { cacheShare, type EmberbackCost, sharedBound, type RuntimeTokens, STEADY_FROM_TURN, type TurnTokens } from './emberback-bench';
import type { CountsJson } from './load/counts-report';
import type { TurnCounts } from './load/counts';
import type { NoisyJson } from './load/noisy-report';
import { ACCEPTANCE_SUITE, type RunSpec } from './load/options';
import type { RunResult } from './load/run';

/**
 * `--write-docs`: docs/benchmarks.md's figures come from the benches' JSON results only. Each
 * bench has a block `<!-- bench:<name>:start -->` … `<!-- bench:<name>:end -->` that this module
 * renders from `bench/results/<name>.json` and rewrites (tools/docs-block.ts); nothing in the
 * blocks is typed by hand.
 */
export const BENCHMARKS_DOC = join(__dirname, '..', 'docs', 'benchmarks.md');

const int = (n: number) => Math.round(n).toLocaleString('en-US');
const ms = (n: number, digits = 2) => n.toFixed(digits);
const pct = (share: number) => `${(share * 100).toFixed(1)} %`;
const day = (iso: string) => iso.slice(0, 10);
const latency = (ms: number) => (ms > 0 && ms % 1000 === 0 ? `${ms / 1000} s` : `${int(ms)} ms`);
/** The machine the bench ran on (the writer runs in the bench's process, right after it). */
const machine = () => `${cpus().length} cores (${cpus()[0]?.model.trim() ?? 'unknown CPU'})`;

interface Stamped {
  date: string;
  node?: string;
}
const stamp = (r: Stamped, extra = '') => `Measured ${day(r.date)}${r.node ? `, Node ${r.node}` : ''}, ${machine()}${extra}.`;

export interface ContextResult extends Stamped {
  iterations: number;
  rows: ContextBenchRow[];
  ratio10kTo100: number;
  target: number;
  verdict: string;
}

export function renderContext(r: ContextResult): string {
  return [
    markdownTable(
      ['committed messages', 'uncompacted read', 'summaries', 'read ms', 'buildContext ms', 'read + assemble + body ms'],
      r.rows.map((x) => [int(x.messages), int(x.uncompactedRead), x.summaries, ms(x.medianReadMs), ms(x.medianBuildContextMs), ms(x.medianTotalMs)]),
    ),
    '',
    `Medians of ${r.iterations} iterations per size. Time at 10,000 / time at 100: **${r.ratio10kTo100.toFixed(2)}** (target ≤ ${r.target}×: ${r.verdict}). ${stamp(r)}`,
  ].join('\n');
}

export type ContextPluginsResult = Stamped & ContextPluginsBench & { iterations: number; ratio10kTo100: number; target: number; verdict: string };

export function renderContextPlugins(r: ContextPluginsResult): string {
  return [
    markdownTable(
      ['committed messages', 'history read ms', 'selfData read ms', 'plugins + assemble + body ms', 'total median ms', 'total p95 ms'],
      r.rows.map((x) => [int(x.messages), ms(x.medianHistoryReadMs), ms(x.medianSelfDataReadMs), ms(x.medianRequestMs), ms(x.medianTotalMs), ms(x.p95TotalMs)]),
    ),
    '',
    `${r.plugins} plugins, ${r.segmentProviders} dynamic segment providers, ${r.iterations} iterations per size. Time at 10,000 / time at 100 (medians): **${r.ratio10kTo100.toFixed(2)}** (target ≤ ${r.target}×: ${r.verdict}). ${stamp(r)}`,
  ].join('\n');
}

export interface EmberbackJson extends Stamped {
  turns: number;
  plugins: string[];
  cachedShare: number;
  /** From turn `steadyFromTurn` on (the steady state); absent in results written before. */
  steadyFromTurn?: number;
  steadyCachedShare?: number;
  steadyCalls?: number;
  /** Mean tokens per turn from turn `steadyFromTurn` on; absent in results written before. */
  steadyPerTurn?: TurnTokens;
  cacheShareTarget: number;
  layoutBound: number;
  steadyLayoutBound?: number;
  byRuntime: RuntimeTokens[];
  auditIdentical: boolean;
  /** Est. $ per turn at the list prices in force (absent in results written before prices existed). */
  cost?: EmberbackCost;
  rows: PrefixRow[];
}

const usd = (v: number | null) => (v === null ? 'no price' : `$${v.toFixed(6)}`);

/** The est. $ line: per turn at list prices, with the prices and their dates. */
function costLine(cost: EmberbackCost | undefined): string[] {
  if (!cost) return [];
  const prices = cost.prices.map((p) => `\`${p.model}\` $${p.input} / $${p.cachedInput} cached / $${p.output} per M tokens (${p.asOf})`).join('; ');
  return [
    `- Est. cost per turn at list prices (emulated token counts priced as if real): mean **${usd(cost.meanPerTurnUsd)}**${cost.steadyMeanPerTurnUsd === undefined ? '' : ` (from turn ${STEADY_FROM_TURN} on ${usd(cost.steadyMeanPerTurnUsd)})`}, median ${usd(cost.medianPerTurnUsd)}, max ${usd(cost.maxPerTurnUsd)}; total ${usd(cost.totalUsd)}. Prices: ${prices || 'none'}.`,
  ];
}

/** The share lines: the target is the steady state's (results written before it was reported: over all calls). */
function shareLines(r: EmberbackJson, from: number, calls: number): string[] {
  const verdict = (share: number) => `target ≥ ${pct(r.cacheShareTarget)}: ${share >= r.cacheShareTarget ? 'reached' : 'not reached'}`;
  if (r.steadyCachedShare === undefined)
    return [`- Emulated cache-read share over all ${int(calls)} calls: **${pct(r.cachedShare)}** (${verdict(r.cachedShare)}).`];
  return [
    `- Emulated cache-read share from turn ${from} on (steady state, ${int(r.steadyCalls ?? 0)} calls): **${pct(r.steadyCachedShare)}** (${verdict(r.steadyCachedShare)}); over all ${int(calls)} calls, the cold first turn counted: ${pct(r.cachedShare)}.`,
  ];
}

/** Tokens per turn in the steady state (results written before they were reported: none). */
function tokensLine(t: TurnTokens | undefined): string[] {
  if (!t) return [];
  const n = (v: number) => int(Math.round(v));
  return [
    `- Tokens per turn from turn ${t.fromTurn} on (mean of ${t.turns} turns, ${t.calls.toFixed(1)} calls a turn): input **${n(t.inputTokens)}** (cached ${n(t.cachedTokens)}, uncached **${n(t.uncachedTokens)}**), output ${n(t.outputTokens)}.`,
  ];
}

export function renderEmberback(r: EmberbackJson): string {
  const from = r.steadyFromTurn ?? STEADY_FROM_TURN;
  const runtimes = [...new Set(r.rows.map((x) => x.runtime))];
  const table = runtimes.map((runtime) => {
    const rows = r.rows.filter((x) => x.runtime === runtime);
    const shared = rows.filter((x) => x.sharedPercent !== null).map((x) => x.sharedPercent!);
    const sizes = rows.map((x) => x.requestTokens).sort((a, b) => a - b);
    const tokens = r.byRuntime.find((t) => t.runtime === runtime);
    return [
      `\`${runtime}\``,
      rows.length,
      int(sizes[Math.floor(sizes.length / 2)]),
      shared.length ? `${Math.min(...shared).toFixed(1)} %` : '—',
      shared.length ? `${(shared.reduce((a, b) => a + b, 0) / shared.length).toFixed(1)} %` : '—',
      pct(sharedBound(rows)),
      pct(sharedBound(rows, { fromTurn: from })),
      tokens ? tokens.calls : '—',
      tokens && tokens.inputTokens > 0 ? pct(cacheShare(tokens)) : '—',
      tokens?.steady && tokens.steady.inputTokens > 0 ? pct(cacheShare(tokens.steady)) : '—',
    ];
  });
  const calls = r.byRuntime.reduce((a, t) => a + t.calls, 0);
  return [
    markdownTable(
      [
        'runtime',
        'turns',
        'median request tokens',
        'min shared',
        'mean shared',
        'bound',
        `bound from turn ${from}`,
        'calls',
        'cache-read share',
        `cache-read from turn ${from}`,
      ],
      table,
    ),
    '',
    ...shareLines(r, from, calls),
    `- Layout bound over all runtimes: **${pct(r.layoutBound)}** with the cold first turn; from turn ${from} on: **${pct(r.steadyLayoutBound ?? sharedBound(r.rows, { fromTurn: from }))}**.`,
    ...tokensLine(r.steadyPerTurn),
    `- Every turn's audit byte-identical: ${r.auditIdentical ? 'yes' : '**no**'}.`,
    ...costLine(r.cost),
    `- ${r.turns} turns; plugins: ${r.plugins.map((p) => `\`${p}\``).join(', ') || 'the default ones'}. ${stamp(r)}`,
  ].join('\n');
}

export type CompactionJson = Stamped & CompactionBenchResult;

export function renderCompaction(r: CompactionJson): string {
  const storedAfter = (turn: number) => r.segments.find((s) => s.turn === turn)?.stored ?? '—';
  const after = r.afterFirstCompaction;
  return [
    markdownTable(
      ['compacted in turn', 'prompt tokens the turn before', 'prompt tokens after'],
      r.sawtooth.map((s) => [s.turn, int(s.before), int(s.after)]),
    ),
    '',
    markdownTable(
      ['turns', 'mean prompt tokens', 'peak prompt tokens', 'summary segments stored'],
      r.intervals.map((i) => [`${i.from}–${i.to}`, int(i.mean), int(i.peak), storedAfter(i.from)]),
    ),
    '',
    `- ${r.turns} turns; trigger window ${int(r.window.effective)}, threshold ${r.window.threshold === null ? '—' : int(r.window.threshold)} estimated tokens; ${r.compactions} compactions (turns ${r.compactionTurns.join(', ')}).`,
    after
      ? `- From the first compaction on: min ${int(after.min)}, max ${int(after.max)}, mean ${int(after.mean)} prompt tokens.`
      : '- No compaction happened.',
    `- Emulated cache-read share of the story's first requests: between compactions ${pct(r.cacheShareBetweenCompactions)}, right after a compaction ${pct(r.cacheShareAfterCompaction)}.`,
    `- ${stamp(r)}`,
  ].join('\n');
}

export type BudgetJson = Stamped & BudgetBenchResult;

export function renderBudget(r: BudgetJson): string {
  return [
    `- ${r.turns} turns, ${r.shelvesPerTurn} tool calls per turn, input limit ${int(r.inputLimit)} estimated tokens.`,
    `- Requests ${int(r.requests)}, trimmed ${int(r.requestsTrimmed)}; estimated tokens built ${int(r.tokensBefore)}, sent ${int(r.tokensAfter)}, saved ${int(r.tokensSaved)} (${pct(r.tokensSaved / Math.max(1, r.tokensBefore))}).`,
    `- Largest request sent: ${int(r.largestSent)} estimated tokens; failed turns: ${r.failedTurns}.`,
    `- Emulated cache-read share with trimming on: all requests ${pct(r.cacheShare)}, steps after the first of a turn ${pct(r.cacheShareWithinTurns)}.`,
    `- ${stamp(r)}`,
  ].join('\n');
}

export interface LoadJson extends Stamped {
  suite: string;
  cores: number;
  cpu: string | null;
  scaleOutRatioCOverB: number | null;
  runs: RunResult[];
}

export function renderLoad(r: LoadJson): string {
  const pair = (a: number | null, b: number | null) => (a === null || b === null ? '—' : `${int(a)} / ${int(b)}`);
  const exactlyOnce = (x: RunResult) =>
    !x.log.failed && !x.log.duplicated && !x.log.outOfOrder && !x.log.missing && !x.turns.errors ? `yes (${int(x.log.committed)} turns)` : '**no**';
  return [
    markdownTable(
      ['run', 'sessions × inputs', 'workers × conc', 'model', 'turns/s', 'ideal', 'eff', 'overhead p50 / p95 ms', 'CPU ms/turn', 'exactly once'],
      r.runs.map((x) => [
        x.spec.name,
        `${x.spec.sessions} × ${x.spec.inputs}`,
        `${x.spec.workers} × ${x.spec.concurrency}`,
        latency(x.spec.latencyMs),
        x.turnsPerSecond.toFixed(1),
        x.idealTurnsPerSecond === null ? '—' : x.idealTurnsPerSecond.toFixed(0),
        x.efficiencyPercent === null ? '—' : `${x.efficiencyPercent.toFixed(0)} %`,
        pair(x.overheadMs.p50, x.overheadMs.p95),
        x.cpuMsPerTurn.total.toFixed(0),
        exactlyOnce(x),
      ]),
    ),
    '',
    markdownTable(
      ['run', 'api', 'workers', 'emulator', 'postgres', 'redis', 'load average start / end'],
      r.runs.map((x) => [
        x.spec.name,
        x.cpuMsPerTurn.api.toFixed(1),
        x.cpuMsPerTurn.workers.toFixed(1),
        x.cpuMsPerTurn.emulator.toFixed(1),
        x.cpuMsPerTurn.postgres.toFixed(1),
        x.cpuMsPerTurn.redis.toFixed(1),
        `${x.loadAverage.start.toFixed(1)} / ${x.loadAverage.end.toFixed(1)}`,
      ]),
    ),
    '',
    ...(r.scaleOutRatioCOverB === null ? [] : [`(c)/(b) = ${r.scaleOutRatioCOverB.toFixed(2)}×.`, '']),
    `CPU ms per committed turn by process group in the second table. Suite \`${r.suite}\`. Measured ${day(r.date)}, Node ${r.node}, ${r.cores} cores (${r.cpu?.trim() ?? 'unknown CPU'}).`,
  ].join('\n');
}

/** `--scenario noisy` (issue 32): tenant B alone and while tenant A floods, A's flood, the verdicts. */
export function renderNoisy(r: NoisyJson): string {
  const x = r.run;
  const s = x.spec;
  const pair = (v: { p50: number | null; p95: number | null }) => (v.p50 === null || v.p95 === null ? '—' : `${int(v.p50)} / ${int(v.p95)}`);
  const times = (n: number | null) => (n === null ? '—' : `${n.toFixed(2)}×`);
  const clean = (log: { failed: number; duplicated: number; outOfOrder: number; missing: number }, errors: number) =>
    !log.failed && !log.duplicated && !log.outOfOrder && !log.missing && !errors;
  const ratio = r.verdicts[0];
  return [
    markdownTable(
      ['tenant B', 'turns', 'latency p50 / p95 ms', 'in the queue p50 / p95 ms', 'load average start / end'],
      (
        [
          ['alone', x.alone],
          ['with A flooding', x.withFlood],
        ] as const
      ).map(([name, p]) => [
        name,
        `${int(p.log.committed)} / ${int(p.turns.expected)}`,
        pair(p.latencyMs),
        pair(p.queuedMs),
        `${p.loadAverage.start.toFixed(1)} / ${p.loadAverage.end.toFixed(1)}`,
      ]),
    ),
    '',
    markdownTable(
      ['tenant A', 'committed once, in order', 'total s', 'turns/s', 'turn p50 / p95 ms (server)', 'load average start / end'],
      [
        [
          `${s.flood.sessions} × ${s.flood.inputs}`,
          clean(x.flood.log, x.flood.turns.errors) && x.flood.log.committed === x.flood.turns.expected
            ? `yes (${int(x.flood.log.committed)} turns)`
            : `**no** (${int(x.flood.log.committed)} / ${int(x.flood.turns.expected)}, ${x.flood.log.duplicated} dup, ${x.flood.log.outOfOrder} out of order, ${x.flood.log.missing} lost, ${x.flood.turns.errors} refused)`,
          (x.flood.windowMs / 1000).toFixed(1),
          x.flood.turnsPerSecond.toFixed(1),
          pair(x.flood.serverLatencyMs),
          `${x.flood.loadAverage.start.toFixed(1)} / ${x.flood.loadAverage.end.toFixed(1)}`,
        ],
      ],
    ),
    '',
    `- B with the flood ÷ B alone: p50 ${times(x.ratio.p50)}, p95 **${times(x.ratio.p95)}** (target ≤ ${s.maxP95Ratio}×: ${ratio?.ok ? 'ok' : 'missed'}).`,
    `- B's turns with the flood that ended before A's last: ${x.playerTurnsDuringFlood} of ${x.withFlood.turns.expected}. A's inputs were all in ${(x.flood.postedMs / 1000).toFixed(1)} s after its first POST (every session had one in after ${(x.flood.startedMs / 1000).toFixed(1)} s), when B's second phase started; ${int(x.flood.turns.retries)} of A's requests and ${int(x.alone.turns.retries + x.withFlood.turns.retries)} of B's were refused (503) and tried again.`,
    `- ${s.workers} workers × ${s.concurrency}, model ${latency(s.latencyMs)}; B: ${s.players.sessions} closed-loop players × ${s.players.inputs} turns per phase. Commit ${r.commit ?? 'unknown'}. Measured ${day(r.date)}, Node ${r.node}, ${r.cores} cores (${r.cpu?.trim() ?? 'unknown CPU'}).`,
  ].join('\n');
}

/** After `npm run bench:load -- --scenario noisy --write-docs`: the `bench:load-noisy` block from its results file. */
export async function writeNoisyDocs(resultsFile: string, docsFile = BENCHMARKS_DOC): Promise<boolean> {
  return writeBlocks(docsFile, [{ marker: 'bench:load-noisy', content: renderNoisy(readJson<NoisyJson>(resultsFile)) }, ...staticBenchBlocks()]);
}

/** `--scenario counts` (issue 33): round trips per turn of a narrator-only and an Emberback turn, the top commands and statements, the verdicts. */
export function renderCounts(r: CountsJson): string {
  const x = r.run;
  const s = x.spec;
  const d1 = (n: number) => n.toFixed(1);
  const split = (v: { api: number; workers: number; total: number }) => `${d1(v.total)} (${d1(v.api)} / ${d1(v.workers)})`;
  const phases = [
    ['narrator-only', x.narrator],
    ['Emberback, every plugin', x.emberback],
  ] as const;
  const top = (title: string, read: (c: TurnCounts) => TurnCounts['breakdown']['redis'], rows = 10) => {
    const names = [...new Set(phases.flatMap(([, p]) => read(p.counts).map((b) => b.name)))];
    const of = (c: TurnCounts, name: string) => read(c).find((b) => b.name === name)?.total ?? 0;
    return markdownTable(
      [title, ...phases.map(([name]) => `${name} per turn`)],
      names
        .map((name) => [name, ...phases.map(([, p]) => of(p.counts, name))] as const)
        .sort((a, b) => Number(b[1]) - Number(a[1]))
        .slice(0, rows)
        .map(([name, ...values]) => [`\`${name}\``, ...values.map((v) => Number(v).toFixed(2))]),
    );
  };
  return [
    markdownTable(
      [
        'per turn',
        'Redis commands (api / workers)',
        'PG statements',
        'PG transactions (api / workers)',
        'HTTP between processes',
        'model calls',
        'CPU ms (api / workers)',
        'events',
        'log bytes',
      ],
      phases.map(([name, p]) => [
        `${name} (${p.counts.turns} turns)`,
        split(p.counts.redisCommands),
        d1(p.counts.pgStatements.total),
        split(p.counts.pgTransactions),
        d1(p.counts.httpBetweenProcesses.total),
        d1(p.counts.modelCalls.total),
        split(p.counts.cpuMs),
        d1(p.counts.logEvents),
        int(p.counts.logBytes.json),
      ]),
    ),
    '',
    top('Redis command', (c) => c.breakdown.redis),
    '',
    top('PostgreSQL statement (first 60 characters)', (c) => c.breakdown.pgStatements),
    '',
    ...r.verdicts.map((v) => `- ${v.ok ? 'PASS' : '**FAIL**'}: ${v.target}`),
    `- Idle for ${x.idle.ms / 1000} s before the phases (no turn; background polls and the bench's two reads of \`/metrics\`), in total: ${split(x.idle.counts.redisCommands)} Redis commands, ${d1(x.idle.counts.pgStatements.total)} statements, ${split(x.idle.counts.pgTransactions)} transactions (API / workers).`,
    `- ${s.workers} workers × ${s.concurrency}, model ${latency(s.latencyMs)}; ${s.sessions} closed-loop sessions × ${s.inputs} turns per phase. Commit ${r.commit ?? 'unknown'}. Measured ${day(r.date)}, Node ${r.node}, ${r.cores} cores (${r.cpu?.trim() ?? 'unknown CPU'}).`,
  ].join('\n');
}

/** After `npm run bench:load -- --scenario counts --write-docs`: the `bench:load-counts` block from its results file. */
export async function writeCountsDocs(resultsFile: string, docsFile = BENCHMARKS_DOC): Promise<boolean> {
  return writeBlocks(docsFile, [{ marker: 'bench:load-counts', content: renderCounts(readJson<CountsJson>(resultsFile)) }, ...staticBenchBlocks()]);
}

/** The acceptance suite's settings (`bench/load/options.ts`), so the page's table of runs cannot drift from the code. */
export function renderLoadSuite(suite: readonly RunSpec[] = ACCEPTANCE_SUITE): string {
  return markdownTable(
    ['run', 'sessions × inputs', 'workers × concurrency', 'model latency', 'shows'],
    suite.map((r) => [r.name, `${r.sessions} × ${r.inputs}`, `${r.workers} × ${r.concurrency}`, latency(r.latencyMs), r.note ?? '']),
  );
}

/** Blocks that depend on the code only (no run): checked by a unit test, rewritten with every `--write-docs`. */
export const staticBenchBlocks = (): DocsBlock[] => [{ marker: 'bench:load-suite', content: renderLoadSuite() }];

const readJson = <T>(file: string): T => JSON.parse(readFileSync(file, 'utf8')) as T;

/** Name → renderer of `bench/results/<name>.json` for the `npm run bench` set. */
const RENDERERS: Record<string, (json: never) => string> = {
  context: renderContext,
  'context-plugins': renderContextPlugins,
  emberback: renderEmberback,
  compaction: renderCompaction,
  budget: renderBudget,
};

export interface WriteBenchDocsOptions {
  resultsDir: string;
  /** The benches that ran (BENCH_ONLY); undefined: all. Blocks of the others are left as they are. */
  only?: readonly string[];
  docsFile?: string;
  log?: (line: string) => void;
}

/** After `npm run bench -- --write-docs`: the blocks of the benches that ran, from their JSON results. */
export async function writeBenchDocs(options: WriteBenchDocsOptions): Promise<void> {
  const file = options.docsFile ?? BENCHMARKS_DOC;
  const names = Object.keys(RENDERERS).filter((n) => !options.only || options.only.includes(n));
  const blocks: DocsBlock[] = names.map((name) => ({
    marker: `bench:${name}`,
    content: RENDERERS[name](readJson<never>(join(options.resultsDir, `${name}.json`))),
  }));
  blocks.push(...staticBenchBlocks());
  const changed = await writeBlocks(file, blocks);
  options.log?.(`${changed ? 'rewrote' : 'unchanged:'} ${blocks.map((b) => b.marker).join(', ')} in ${file}`);
}

/** After `npm run bench:load -- --write-docs`: the `bench:load` block from this run's results file. */
export async function writeLoadDocs(resultsFile: string, docsFile = BENCHMARKS_DOC): Promise<boolean> {
  return writeBlocks(docsFile, [{ marker: 'bench:load', content: renderLoad(readJson<LoadJson>(resultsFile)) }, ...staticBenchBlocks()]);
}
