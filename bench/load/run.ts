import { loadavg } from 'node:os';
import { PlayClient } from '../../apps/play/play-client';
import type { Cleanups } from './cleanups';
import { openCountWindow } from './count-window';
import type { TurnCounts } from './counts';
import { backendsCpuMs, cpuSnapshot, type CpuUse, cpuUse } from './cpu';
import { checkExactlyOnce, efficiencyPercent, type ExactlyOnce, idealThroughput, overheads, type Spread, spread, throughput } from './metrics';
import type { RunSpec } from './options';
import { newSessions, now, runPlayers, type TurnRecord } from './players';
import { warmUp } from './warmup';
import { startBenchStack } from './stack';
import { type Contention, type CpuCeiling, cpuCeiling, watchContention } from './sched';
import { readLog, type TurnStepName } from './verify';

/** Every figure of one run (the JSON written under bench/results/, one entry per run). */
export interface RunResult {
  spec: RunSpec;
  startedAt: string;
  /** Database, migration, processes up, sessions created, warm-up turns (2 per worker, outside the window and the checks). */
  setupMs: number;
  /** First POST start to the last turn's end (client clock): the measured window. */
  windowMs: number;
  turns: { expected: number; committed: number; failed: number; errors: number };
  /** From the event log and turn_messages at the end. */
  log: ExactlyOnce;
  modelCallsPerTurn: number | null;
  turnsPerSecond: number;
  idealTurnsPerSecond: number | null;
  efficiencyPercent: number | null;
  /** Client clock: POST start → the long-poll that returned the end. */
  latencyMs: Spread;
  /** Server clock: `player-input.submitted` → `turn.committed` recorded_at. */
  serverLatencyMs: Spread;
  /** latencyMs − model latency. */
  overheadMs: Spread;
  serverOverheadMs: Spread;
  /** Per step of a turn (see TurnStepName); `model` is net of the model latency. */
  stepsMs: Record<TurnStepName, Spread>;
  /** GET requests per turn, mean (1.0: every turn's first long-poll saw its end). */
  pollsPerTurn: number;
  /** CPU used over the window: per group, the total, and the PostgreSQL backends of this run's database. */
  cpuMs: CpuUse & { postgresBenchDb: number };
  cpuMsPerTurn: CpuUse & { postgresBenchDb: number };
  /** Round trips per committed turn (issue 33): Redis commands, PostgreSQL statements and transactions, HTTP, CPU, log bytes; the top commands and statements. */
  counts: TurnCounts;
  /** The machine's 1-minute load average when the window opened and closed (other work shares the cores). */
  loadAverage: { start: number; end: number };
  /** Over the window: how much the processes waited for a core (main threads), the machine's runnable tasks, CPU pressure. */
  contention?: Contention;
  /**
   * CPU ms per committed turn of everything the run itself runs: API, workers, emulator, the run
   * database's backends, Redis, and this bench client; and the turns/s the machine's cores allow
   * at that rate (the most a run can reach, whatever it waits on).
   */
  cpuCeiling?: CpuCeiling;
  /** Processes that exited during the run. */
  crashed: string[];
  /** A few of the client's errors (distinct messages). */
  errorSamples: string[];
}

const PROGRESS_EVERY_MS = 5_000;

/** One run: its own stack, the closed-loop players, the checks; everything stopped and dropped after. */
export async function runOnce(spec: RunSpec, options: { cleanups: Cleanups; progress: (line: string) => void }): Promise<RunResult> {
  const startedAt = new Date().toISOString();
  const setupStart = now();
  const stack = await startBenchStack({ spec, cleanups: options.cleanups, log: options.progress });
  try {
    const client = new PlayClient(stack.baseUrl, stack.apiKey);
    const sessionIds = await newSessions(client, spec.sessions);
    // turns outside the window and the checks, so connections and code paths are warm
    await warmUp({ client, spec, newSessions: (n) => newSessions(client, n), signal: options.cleanups.signal });
    const setupMs = now() - setupStart;

    const expected = spec.sessions * spec.inputs;
    let done = 0;
    let failed = 0;
    const progressStart = now();
    const timer = setInterval(() => {
      if (options.cleanups.interrupted) return;
      const rate = done / ((now() - progressStart) / 1000);
      options.progress(`  [${spec.name}] ${done}/${expected} turns, ${rate.toFixed(1)} turns/s${failed ? `, ${failed} not committed` : ''}`);
    }, PROGRESS_EVERY_MS);
    const groups = { api: [stack.api.pid], workers: stack.workers.map((w) => w.pid), emulator: [stack.emulator.pid] };
    const counting = await openCountWindow(stack);
    const before = cpuSnapshot(groups);
    const contention = watchContention({ ...groups, bench: [process.pid] });
    const clientBefore = process.cpuUsage();
    const loadAtStart = loadavg()[0];
    let turns: TurnRecord[];
    try {
      turns = await runPlayers({
        client,
        sessionIds,
        inputs: spec.inputs,
        signal: options.cleanups.signal,
        onTurn: (t) => {
          done++;
          if (t.outcome !== 'committed') failed++;
        },
      });
    } finally {
      clearInterval(timer);
    }
    const after = cpuSnapshot(groups);
    const contended = contention.stop();
    const clientCpu = process.cpuUsage(clientBefore);
    const counts = await counting.close(turns);
    const loadAverage = { start: loadAtStart, end: loadavg()[0] };
    const crashed = [stack.api, stack.emulator, ...stack.workers].filter((p) => p.exited());
    if (!options.cleanups.interrupted) for (const p of crashed) options.progress(`  ${p.name} exited during the run:\n${p.output()}`);

    const reading = await readLog({ databaseUrl: stack.databaseUrl, databaseName: stack.databaseName, tenantId: stack.tenantId, turns });
    const committed = turns.filter((t) => t.outcome === 'committed');
    const windowMs = Math.max(...turns.map((t) => t.endedAt)) - Math.min(...turns.map((t) => t.startedAt));
    const latencies = committed.map((t) => t.endedAt - t.startedAt);
    const rate = throughput(committed.length, windowMs);
    const ideal = idealThroughput({ workers: spec.workers, concurrency: spec.concurrency, modelLatencyMs: spec.latencyMs });
    const used = { ...cpuUse(before, after), postgresBenchDb: backendsCpuMs(before, after, reading.backendPids) };
    const ceilingMs = used.api + used.workers + used.emulator + used.postgresBenchDb + used.redis + (clientCpu.user + clientCpu.system) / 1000;
    const perTurn = Object.fromEntries(Object.entries(used).map(([k, ms]) => [k, committed.length ? ms / committed.length : 0])) as RunResult['cpuMsPerTurn'];
    return {
      spec,
      startedAt,
      setupMs,
      windowMs,
      turns: {
        expected,
        committed: committed.length,
        failed: turns.filter((t) => t.outcome === 'failed').length,
        errors: turns.filter((t) => t.outcome === 'error').length,
      },
      log: checkExactlyOnce(reading.sessions),
      modelCallsPerTurn: committed.length ? reading.modelCalls / committed.length : null,
      turnsPerSecond: rate,
      idealTurnsPerSecond: ideal,
      efficiencyPercent: efficiencyPercent(rate, ideal),
      latencyMs: spread(latencies),
      serverLatencyMs: spread(reading.serverLatenciesMs),
      overheadMs: spread(overheads(latencies, spec.latencyMs)),
      serverOverheadMs: spread(overheads(reading.serverLatenciesMs, spec.latencyMs)),
      stepsMs: Object.fromEntries(
        Object.entries(reading.stepsMs).map(([step, ms]) => [step, spread(step === 'model' ? overheads(ms, spec.latencyMs) : ms)]),
      ) as RunResult['stepsMs'],
      pollsPerTurn: turns.length ? turns.reduce((n, t) => n + t.polls, 0) / turns.length : 0,
      cpuMs: used,
      cpuMsPerTurn: perTurn,
      counts,
      loadAverage,
      contention: contended,
      cpuCeiling: cpuCeiling(ceilingMs, committed.length),
      crashed: crashed.map((p) => p.name),
      errorSamples: [...new Set(turns.flatMap((t) => (t.error ? [t.error] : [])))].slice(0, 5),
    };
  } catch (error) {
    const crashed = [stack.api, stack.emulator, ...stack.workers].filter((p) => p.exited());
    if (crashed.length && !options.cleanups.interrupted) options.progress(crashed.map((p) => `${p.name} exited:\n${p.output()}`).join('\n'));
    throw error;
  } finally {
    await stack.stop();
  }
}
