import { join } from 'node:path';
import type { Verdict } from '../verdicts';
import { checkTargets, formatBreakdown, formatCountsTable } from './counts';
import { type CountsResult, phaseClean } from './counts-scenario';
import { type ScenarioJson, scenarioResultsFile, writeScenarioResults } from './scenario-results';

/** bench/results/counts.json: the run `--scenario counts --write-docs` rendered into docs/benchmarks.md (committed). */
export const COUNTS_DOCS_RESULTS_FILE = join(__dirname, '..', 'results', 'counts.json');

/** bench/results/load-counts-<ISO time>.json: every run's own file (not committed: `load-*.json`). */
export const countsResultsFile = (startedAt: Date): string => scenarioResultsFile('counts', startedAt);

/** The scenario's JSON: the run, the machine and the commit, the verdicts. */
export type CountsJson = ScenarioJson<'counts', CountsResult>;

/** Issue 33's targets (narrator turn; Emberback ≤ 3× it), then both phases exactly once, in order. */
export function countsVerdicts(r: CountsResult): Verdict[] {
  return [
    ...checkTargets(r.narrator.counts, r.emberback.counts).map((c) => ({ bench: 'counts', ...c })),
    { bench: 'counts', target: `every turn of both phases committed exactly once, in order`, ok: phaseClean(r.narrator) && phaseClean(r.emberback) },
  ];
}

/** The table of both phases, then each phase's top Redis commands and PostgreSQL statements. */
export function formatCountsReport(r: CountsResult): string {
  const phases = [
    ['narrator-only', r.narrator],
    ['Emberback (every plugin)', r.emberback],
  ] as const;
  return [
    `per committed turn, ${r.spec.workers} workers x ${r.spec.concurrency}, model ${r.spec.latencyMs} ms, ${r.spec.sessions} sessions x ${r.spec.inputs} turns per phase`,
    '(api / workers: the API process, the worker processes together; http: between processes, model calls apart; cpu: /proc utime + stime, the emulator apart; pg cpu ms: every postgres process of the machine (the load of others included), bench db: the backends of the run database alone (schedstat), backends: how many were seen in the window (a total); log bytes: data + metadata of the events appended, as JSON text)',
    formatCountsTable(phases.map(([name, p]) => ({ name, counts: p.counts }))),
    '',
    `idle ${r.idle.ms / 1000} s with no turn, totals (background polls and the bench's two reads of /metrics):`,
    formatCountsTable([{ name: 'idle (total)', counts: r.idle.counts }]),
    ...phases.flatMap(([name, p]) => [
      '',
      formatBreakdown(`${name}: Redis command`, p.counts.breakdown.redis),
      '',
      formatBreakdown(`${name}: PostgreSQL statement`, p.counts.breakdown.pgStatements),
    ]),
  ].join('\n');
}

export function writeCountsResults(file: string, run: CountsResult, verdicts: Verdict[]): CountsJson {
  return writeScenarioResults(file, 'counts', run, verdicts);
}
