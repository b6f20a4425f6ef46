import { cpus } from 'node:os';
import { join } from 'node:path';
import type { Verdict } from '../verdicts';
import { exactlyOnce, type NoisyResult } from './noisy';
import { formatTable } from './report';
import { type ScenarioJson, scenarioResultsFile, writeScenarioResults } from './scenario-results';

const DASH = '—';
const int = (n: number | null) => (n === null ? DASH : Math.round(n).toLocaleString('en-US'));
const pair = (s: { p50: number | null; p95: number | null }) => `${int(s.p50)} / ${int(s.p95)}`;
const times = (n: number | null) => (n === null ? DASH : `${n.toFixed(2)}x`);

/** bench/results/noisy.json: the run `--scenario noisy --write-docs` rendered into docs/benchmarks.md (committed). */
export const NOISY_DOCS_RESULTS_FILE = join(__dirname, '..', 'results', 'noisy.json');

/** bench/results/load-noisy-<ISO time>.json: every scenario run's own file (not committed: `load-*.json`). */
export const noisyResultsFile = (startedAt: Date): string => scenarioResultsFile('noisy', startedAt);

/** The scenario's JSON: the run, the machine it ran on and the commit it measured. */
export type NoisyJson = ScenarioJson<'noisy', NoisyResult>;

/** The scenario's targets: B's p95 ratio, and both tenants exactly once, in order. */
export function noisyVerdicts(r: NoisyResult): Verdict[] {
  const once = exactlyOnce(r);
  const p95 = r.ratio.p95;
  return [
    {
      bench: 'noisy',
      target: `B's p95 with A's flood / alone = ${times(p95)} (${int(r.withFlood.latencyMs.p95)} / ${int(r.alone.latencyMs.p95)} ms), target <= ${r.spec.maxP95Ratio}x`,
      ok: p95 !== null && p95 <= r.spec.maxP95Ratio,
    },
    {
      bench: 'noisy',
      target: `A: every turn committed exactly once, in order per session (${int(r.flood.log.committed)}/${int(r.flood.turns.expected)})`,
      ok: once.flood,
    },
    {
      bench: 'noisy',
      target: `B: every turn committed exactly once, in order (${int(r.alone.log.committed + r.withFlood.log.committed)}/${int(r.alone.turns.expected + r.withFlood.turns.expected)})`,
      ok: once.players,
    },
  ];
}

/** Requests tried again, and in parentheses the 429s of them (the tenant's rate limit; results from before counted none apart). */
const retried = (t: { retries: number; rateLimited?: number }) => `${t.retries} (${t.rateLimited ?? '?'})`;

/** The scenario's tables: B alone and with the flood, then A's flood. */
export function formatNoisyReport(r: NoisyResult): string {
  const s = r.spec;
  const phases = formatTable([
    ['tenant B', 'turns', 'retried (429)', 'latency p50/p95', 'server p50/p95', 'queued p50/p95', 'wall s', 'load avg'],
    ...(
      [
        ['alone', r.alone],
        ['with A flooding', r.withFlood],
      ] as const
    ).map(([name, p]) => [
      name,
      `${p.log.committed}/${p.turns.expected}`,
      retried(p.turns),
      pair(p.latencyMs),
      pair(p.serverLatencyMs),
      pair(p.queuedMs),
      (p.windowMs / 1000).toFixed(1),
      `${p.loadAverage.start.toFixed(1)}/${p.loadAverage.end.toFixed(1)}`,
    ]),
  ]);
  const f = r.flood;
  const flood = formatTable([
    [
      'tenant A',
      'committed',
      'failed',
      'dup',
      'out of order',
      'lost',
      'refused',
      'retried (429)',
      'posted in s',
      'total s',
      'turns/s',
      'server p50/p95',
      'queued p50/p95',
    ],
    [
      `${s.flood.sessions} x ${s.flood.inputs}`,
      `${f.log.committed}/${f.turns.expected}`,
      String(f.log.failed),
      String(f.log.duplicated),
      String(f.log.outOfOrder),
      String(f.log.missing),
      String(f.turns.errors),
      retried(f.turns),
      (f.startedMs / 1000).toFixed(1),
      (f.postedMs / 1000).toFixed(1),
      (f.windowMs / 1000).toFixed(1),
      f.turnsPerSecond.toFixed(1),
      pair(f.serverLatencyMs),
      pair(f.queuedMs),
    ],
  ]);
  const notes = [
    `B with the flood / B alone: p50 ${times(r.ratio.p50)}, p95 ${times(r.ratio.p95)} (target p95 <= ${s.maxP95Ratio}x)`,
    `B's turns with the flood that ended before A's last: ${r.playerTurnsDuringFlood}/${r.withFlood.turns.expected}`,
    `${s.workers} worker(s) x ${s.concurrency}, model ${s.latencyMs} ms, ${cpus().length} cores; load average (1 min) during A's flood ${f.loadAverage.start.toFixed(1)}/${f.loadAverage.end.toFixed(1)} (the machine may run other work: compare runs on one machine)`,
    ...(r.crashed.length ? [`exited during the run: ${r.crashed.join(', ')}`] : []),
    ...[
      ['B alone', r.alone.errorSamples],
      ['B with the flood', r.withFlood.errorSamples],
      ['A', f.errorSamples],
    ].flatMap(([who, samples]) => (samples.length ? [`${String(who)}: client errors, e.g. ${(samples as string[]).join(' | ')}`] : [])),
  ];
  return [
    `noisy neighbour: tenant B ${s.players.sessions} closed-loop players x ${s.players.inputs} turns, alone and while tenant A floods`,
    'ms; latency = client clock (POST start → long-poll end), server = submitted → committed, queued = submitted → execution.started (event recorded_at)',
    phases,
    '',
    flood,
    '',
    ...notes,
  ].join('\n');
}

export function writeNoisyResults(file: string, run: NoisyResult, verdicts: Verdict[]): NoisyJson {
  return writeScenarioResults(file, 'noisy', run, verdicts);
}
