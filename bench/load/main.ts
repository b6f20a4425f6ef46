import { copyFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { writeCountsDocs, writeLoadDocs, writeNoisyDocs } from '../bench-docs';
import { type Verdict, verdictExitCode } from '../verdicts';
import { Cleanups } from './cleanups';
import { COUNTS_DOCS_RESULTS_FILE, countsResultsFile, countsVerdicts, formatCountsReport, writeCountsResults } from './counts-report';
import { type CountsResult, runCounts } from './counts-scenario';
import { type NoisyResult, runNoisy } from './noisy';
import { formatNoisyReport, NOISY_DOCS_RESULTS_FILE, noisyResultsFile, noisyVerdicts, writeNoisyResults } from './noisy-report';
import { type CountsSpec, type NoisySpec, parseBenchArgs, USAGE, UsageError } from './options';
import { DOCS_RESULTS_FILE, formatReport, formatRunCounts, resultsFile, writeResults } from './report';
import { runOnce, type RunResult } from './run';
import { warmupTurnsOf } from './warmup';

/**
 * `npm run bench:load`: closed-loop players against the API and N worker processes on the real
 * PostgreSQL and Redis, the provider emulator at a given latency. Prints a table per run and writes
 * bench/results/load-<time>.json (with `--write-docs` also bench/results/load.json, the committed copy
 * the docs quote). Progress goes to stderr.
 */
async function main() {
  let options: ReturnType<typeof parseBenchArgs>;
  /** `--write-docs`: rewrite docs/benchmarks.md's `bench:load` block from this run's results file. */
  const writeDocs = process.argv.includes('--write-docs');
  try {
    options = parseBenchArgs(process.argv.slice(2).filter((a) => a !== '--write-docs'));
  } catch (error) {
    if (error instanceof UsageError) {
      console.error(error.message);
      process.exit(2);
    }
    throw error;
  }
  if (options === 'help') {
    console.log(USAGE);
    return;
  }
  const progress = (line: string) => process.stderr.write(`${line}\n`);
  const cleanups = new Cleanups();
  cleanups.onSignals(progress);
  if (options.suite === 'scenario') {
    const spec = options.scenario;
    const chosen = { cleanups, progress, writeDocs, enforce: options.verdict };
    if (spec.name === 'counts') await scenario(countsScenario(spec), chosen);
    else await scenario(noisyScenario(spec), chosen);
    return;
  }
  const results: RunResult[] = [];
  const file = resultsFile(new Date());
  try {
    progress(`bench:load, ${options.suite} suite: ${options.runs.length} run(s) on ${cpus().length} cores`);
    for (const spec of options.runs) {
      progress(
        `run ${spec.name}: ${spec.sessions} sessions x ${spec.inputs} inputs, ${spec.workers} worker(s) x concurrency ${spec.concurrency}, model ${spec.latencyMs} ms, after ${warmupTurnsOf(spec)} warm-up turns${spec.note ? ` (${spec.note})` : ''}`,
      );
      const result = await runOnce(spec, { cleanups, progress });
      if (cleanups.interrupted) break;
      results.push(result);
      writeResults(file, results, options.suite);
      progress(
        `  done: ${result.log.committed}/${result.turns.expected} committed, ${result.turnsPerSecond.toFixed(1)} turns/s, overhead p50 ${Math.round(result.overheadMs.p50 ?? 0)} ms`,
      );
    }
  } finally {
    if (results.length && !cleanups.interrupted) {
      console.log(`\n${formatReport(results)}`);
      console.log(`\n${formatRunCounts(results)}`);
      console.log(`\nwrote ${file}`);
      if (writeDocs) {
        // the figures the docs quote, kept in the repository beside them (the timestamped files are not)
        copyFileSync(file, DOCS_RESULTS_FILE);
        console.log(`${(await writeLoadDocs(DOCS_RESULTS_FILE)) ? 'rewrote' : 'unchanged:'} bench:load in docs/benchmarks.md from ${DOCS_RESULTS_FILE}`);
      }
    }
    await cleanups.runAll();
  }
  const bad = results.filter((r) => r.log.failed || r.log.duplicated || r.log.outOfOrder || r.log.missing || r.turns.errors);
  if (bad.length) {
    console.error(`not exactly once, in order: run(s) ${bad.map((r) => r.spec.name).join(', ')}`);
    process.exitCode = 1;
  }
}

/** A scenario of `--scenario`: how to run it, judge it, write and print it. */
interface Scenario<R> {
  banner: string;
  run(options: { cleanups: Cleanups; progress: (line: string) => void }): Promise<R>;
  verdicts(run: R): Verdict[];
  /** The verdicts never waived (every turn exactly once, in order). */
  always(verdicts: readonly Verdict[]): Verdict[];
  format(run: R): string;
  file: string;
  write(file: string, run: R, verdicts: Verdict[]): void;
  docs: { file: string; block: string; write(file: string): Promise<boolean> };
  words?: { ok: string; missed: string };
}

function noisyScenario(spec: NoisySpec): Scenario<NoisyResult> {
  return {
    banner: `scenario noisy on ${cpus().length} cores: ${spec.workers} worker(s) x ${spec.concurrency}, model ${spec.latencyMs} ms; B ${spec.players.sessions} players x ${spec.players.inputs}, A ${spec.flood.sessions} x ${spec.flood.inputs}`,
    run: (options) => runNoisy(spec, options),
    verdicts: noisyVerdicts,
    // the ratio may be waived (--no-verdict); exactly once never is
    always: (verdicts) => verdicts.slice(1),
    format: formatNoisyReport,
    file: noisyResultsFile(new Date()),
    write: writeNoisyResults,
    docs: { file: NOISY_DOCS_RESULTS_FILE, block: 'bench:load-noisy', write: writeNoisyDocs },
  };
}

function countsScenario(spec: CountsSpec): Scenario<CountsResult> {
  return {
    banner: `scenario counts on ${cpus().length} cores: ${spec.workers} worker(s) x ${spec.concurrency}, model ${spec.latencyMs} ms; ${spec.sessions} narrator-only, then ${spec.sessions} Emberback sessions x ${spec.inputs} turns; warm-up ${warmupTurnsOf(spec)} turns of each kind`,
    run: (options) => runCounts(spec, options),
    verdicts: countsVerdicts,
    // the round-trip targets may be waived (--no-verdict); exactly once never is
    always: (verdicts) => verdicts.slice(-1),
    format: formatCountsReport,
    file: countsResultsFile(new Date()),
    write: writeCountsResults,
    docs: { file: COUNTS_DOCS_RESULTS_FILE, block: 'bench:load-counts', write: writeCountsDocs },
    words: { ok: 'PASS', missed: 'FAIL' },
  };
}

/** `--scenario noisy|counts`: one run, its tables, its JSON (and with `--write-docs` the docs block), then the verdicts. */
async function scenario<R>(
  s: Scenario<R>,
  options: { cleanups: Cleanups; progress: (line: string) => void; writeDocs: boolean; enforce: boolean },
): Promise<void> {
  const { cleanups, progress } = options;
  progress(`bench:load, ${s.banner}`);
  try {
    const run = await s.run({ cleanups, progress });
    if (cleanups.interrupted) return;
    const verdicts = s.verdicts(run);
    s.write(s.file, run, verdicts);
    console.log(`\n${s.format(run)}`);
    console.log(`\nwrote ${s.file}`);
    if (options.writeDocs) {
      copyFileSync(s.file, s.docs.file);
      console.log(`${(await s.docs.write(s.docs.file)) ? 'rewrote' : 'unchanged:'} ${s.docs.block} in docs/benchmarks.md from ${s.docs.file}`);
    }
    const code = verdictExitCode(verdicts, { enforce: options.enforce, log: (l) => console.log(l), words: s.words });
    const notOnce = s.always(verdicts).filter((v) => !v.ok);
    if (notOnce.length) console.error(`not exactly once, in order (${notOnce.map((v) => v.target.split(':')[0]).join(', ')}): exit code 1`);
    process.exitCode = notOnce.length ? 1 : code;
  } finally {
    await cleanups.runAll();
  }
}

main().catch((error) => {
  console.error(error instanceof Error ? (error.stack ?? error.message) : error);
  process.exit(1);
});
