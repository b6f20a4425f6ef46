import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { dirname, join } from 'node:path';
import { formatBreakdown, formatCountsTable } from './counts';
import type { RunResult } from './run';
import { formatContention } from './sched';

const DASH = '—';

const int = (n: number | null) => (n === null ? DASH : Math.round(n).toLocaleString('en-US'));
const dec = (n: number | null, digits = 1) => (n === null ? DASH : n.toFixed(digits));
const pair = (a: number | null, b: number | null) => `${int(a)} / ${int(b)}`;

/** Rows of text as aligned columns (the first row is the header). */
export function formatTable(rows: readonly (readonly string[])[]): string {
  const widths = rows[0].map((_, c) => Math.max(...rows.map((r) => [...(r[c] ?? '')].length)));
  const line = (r: readonly string[]) => r.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]) : cell.padStart(widths[c]))).join('  ');
  return [line(rows[0]), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.slice(1).map(line)].join('\n');
}

/** The two tables: throughput and correctness, then latency and CPU; one row per run. */
export function formatReport(results: readonly RunResult[]): string {
  const first = formatTable([
    ['run', 'sessions x inputs', 'workers x conc', 'model ms', 'committed', 'failed', 'dup', 'out of order', 'lost', 'wall s', 'turns/s', 'ideal', 'eff %'],
    ...results.map((r) => [
      r.spec.name,
      `${r.spec.sessions} x ${r.spec.inputs}`,
      `${r.spec.workers} x ${r.spec.concurrency}`,
      String(r.spec.latencyMs),
      `${r.log.committed}/${r.turns.expected}`,
      String(r.log.failed),
      String(r.log.duplicated),
      String(r.log.outOfOrder),
      String(r.log.missing),
      dec(r.windowMs / 1000),
      dec(r.turnsPerSecond),
      r.idealTurnsPerSecond === null ? DASH : dec(r.idealTurnsPerSecond),
      dec(r.efficiencyPercent),
    ]),
  ]);
  const second = formatTable([
    [
      'run',
      'latency p50/p95',
      'server p50/p95',
      'overhead p50/p95',
      'server ovh p50/p95',
      'CPU ms/turn',
      'api',
      'workers',
      'emulator',
      'postgres',
      '(bench db)',
      'redis',
    ],
    ...results.map((r) => {
      const c = r.cpuMsPerTurn;
      return [
        r.spec.name,
        pair(r.latencyMs.p50, r.latencyMs.p95),
        pair(r.serverLatencyMs.p50, r.serverLatencyMs.p95),
        pair(r.overheadMs.p50, r.overheadMs.p95),
        pair(r.serverOverheadMs.p50, r.serverOverheadMs.p95),
        dec(c.total),
        dec(c.api),
        dec(c.workers),
        dec(c.emulator),
        dec(c.postgres),
        dec(c.postgresBenchDb),
        dec(c.redis),
      ];
    }),
  ]);
  const steps = ['in', 'queued', 'claimed', 'model', 'recorded', 'out'] as const;
  const third = formatTable([
    ['run', ...steps.map((s) => `${s} p50/p95`)],
    ...results.map((r) => [r.spec.name, ...steps.map((s) => pair(r.stepsMs[s].p50, r.stepsMs[s].p95))]),
  ]);
  const notes: string[] = [];
  const b = results.find((r) => r.spec.name === 'b');
  const c = results.find((r) => r.spec.name === 'c');
  if (b && c && b.turnsPerSecond > 0) notes.push(`(c)/(b): 2 workers / 1 worker at concurrency 16 = ${(c.turnsPerSecond / b.turnsPerSecond).toFixed(2)}x`);
  notes.push(
    `load average (1 min) at the window's start/end: ${results.map((r) => `${r.spec.name} ${r.loadAverage.start.toFixed(1)}/${r.loadAverage.end.toFixed(1)}`).join(', ')} on ${cpus().length} cores`,
  );
  for (const r of results) {
    if (r.cpuCeiling)
      notes.push(
        `run ${r.spec.name}: its own processes (api, workers, emulator, bench db, redis, this client) used ${dec(r.cpuCeiling.msPerTurn)} CPU ms per turn: ${cpus().length} cores allow at most ${dec(r.cpuCeiling.turnsPerSecond)} turns/s at that rate` +
          (r.idealTurnsPerSecond
            ? ` (${dec(r.cpuCeiling.turnsPerSecond === null ? null : (r.cpuCeiling.turnsPerSecond / r.idealTurnsPerSecond) * 100, 0)} % of ideal)`
            : ''),
      );
    if (r.contention) notes.push(`run ${r.spec.name}: ${formatContention(r.contention, cpus().length)}`);
    if (r.modelCallsPerTurn !== null && Math.abs(r.modelCallsPerTurn - 1) > 1e-9)
      notes.push(`run ${r.spec.name}: ${r.modelCallsPerTurn.toFixed(2)} model calls per turn (overhead assumes one)`);
    if (r.turns.errors) notes.push(`run ${r.spec.name}: ${r.turns.errors} client errors, e.g. ${r.errorSamples.join(' | ')}`);
    if (r.crashed.length) notes.push(`run ${r.spec.name}: exited during the run: ${r.crashed.join(', ')}`);
  }
  return [
    first,
    '',
    'ms; latency = client clock (POST start → long-poll end), server = event recorded_at; overhead = latency − model latency; CPU over the window per committed turn (postgres: all its processes, (bench db): the run database backends only)',
    second,
    '',
    'where the overhead goes, ms per step of a turn: in = POST start → input recorded; queued → claimed (execution.started); claimed → llm.calling; model = llm.calling → llm.responded − model latency; recorded → turn.committed; out → the long-poll returns',
    third,
    ...(notes.length ? ['', ...notes] : []),
  ].join('\n');
}

/** Round trips per committed turn of each run, then each run's top Redis commands and PostgreSQL statements. */
export function formatRunCounts(results: readonly RunResult[]): string {
  return [
    'round trips per committed turn (api / workers: the API process, the worker processes together; http: between processes, model calls apart; cpu: /proc, the emulator apart; log bytes: data + metadata as JSON text)',
    formatCountsTable(results.map((r) => ({ name: r.spec.name, counts: r.counts }))),
    ...results.flatMap((r) => [
      '',
      formatBreakdown(`run ${r.spec.name}: Redis command`, r.counts.breakdown.redis),
      '',
      formatBreakdown(`run ${r.spec.name}: PostgreSQL statement`, r.counts.breakdown.pgStatements),
    ]),
  ].join('\n');
}

/** bench/results/load-<ISO time of the start>.json: every run's own file (not committed; see .gitignore). */
/** bench/results/load.json: the run `--write-docs` rendered into docs/benchmarks.md (committed with the docs). */
export const DOCS_RESULTS_FILE = join(__dirname, '..', 'results', 'load.json');

export function resultsFile(startedAt: Date): string {
  return join(__dirname, '..', 'results', `load-${startedAt.toISOString().replace(/:/g, '-')}.json`);
}

/** (Re)writes the results file with the runs done so far: an interrupted suite keeps its finished runs. */
export function writeResults(file: string, results: readonly RunResult[], suite: string): void {
  mkdirSync(dirname(file), { recursive: true });
  const b = results.find((r) => r.spec.name === 'b');
  const c = results.find((r) => r.spec.name === 'c');
  writeFileSync(
    file,
    JSON.stringify(
      {
        name: 'load',
        date: new Date().toISOString(),
        suite,
        node: process.version,
        cores: cpus().length,
        cpu: cpus()[0]?.model ?? null,
        scaleOutRatioCOverB: b && c && b.turnsPerSecond > 0 ? c.turnsPerSecond / b.turnsPerSecond : null,
        runs: results,
      },
      null,
      2,
    ),
  );
}
