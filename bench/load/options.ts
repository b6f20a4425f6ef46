import { parseArgs } from 'node:util';
import { z } from 'zod';

/** One load run: closed-loop players against the API and `workers` worker processes. */
export interface RunSpec {
  /** A short label: a..e in the acceptance suite, `custom` for one run from the flags. */
  name: string;
  sessions: number;
  /** Inputs per session, each submitted after the previous one's turn ended. */
  inputs: number;
  /** The emulator's delay before it answers a model call. */
  latencyMs: number;
  workers: number;
  /** COVEL_WORKER_CONCURRENCY of each worker. */
  concurrency: number;
  /** COVEL_DB_POOL_SIZE of the API and the workers; unset: the engine's default. */
  dbPoolSize?: number;
  /** Warm-up turns before the window (`--warmup`, closed-loop on as many sessions as the run's); none given: 2 per worker. */
  warmupTurns?: number;
  /** What the run is there to show. */
  note?: string;
}

export interface BenchOptions {
  runs: RunSpec[];
  suite: 'acceptance' | 'quick' | 'custom';
}

/** Issue 9's acceptance set (`npm run bench:load` with no flags). */
export const ACCEPTANCE_SUITE: RunSpec[] = [
  { name: 'a', sessions: 64, inputs: 5, latencyMs: 1000, workers: 2, concurrency: 32, note: 'overhead and efficiency' },
  { name: 'b', sessions: 64, inputs: 5, latencyMs: 1000, workers: 1, concurrency: 16, note: 'scale-out base' },
  { name: 'c', sessions: 64, inputs: 5, latencyMs: 1000, workers: 2, concurrency: 16, note: 'scale-out: (c)/(b)' },
  { name: 'd', sessions: 64, inputs: 5, latencyMs: 0, workers: 2, concurrency: 32, note: 'most turns/s, CPU per turn' },
  { name: 'e', sessions: 200, inputs: 10, latencyMs: 1000, workers: 2, concurrency: 32, note: 'exactly once at 2,000 turns' },
];

/**
 * Issue 32's noisy neighbour (`--scenario noisy`): on one stack, tenant B's closed-loop players alone,
 * then again while tenant A floods the queue with every input of its sessions at once.
 */
export interface NoisySpec {
  name: 'noisy';
  latencyMs: number;
  workers: number;
  /** COVEL_WORKER_CONCURRENCY of each worker. */
  concurrency: number;
  dbPoolSize?: number;
  /** Tenant B: closed-loop players (each input posted after the previous turn ended), in each phase on fresh sessions. */
  players: { sessions: number; inputs: number };
  /** Tenant A: every session's inputs posted one after another without waiting for a turn; all sessions at once. */
  flood: { sessions: number; inputs: number };
  /** The target: B's p95 turn latency during the flood ÷ B's p95 alone, at most this. */
  maxP95Ratio: number;
}

export const NOISY_SCENARIO: NoisySpec = {
  name: 'noisy',
  latencyMs: 200,
  workers: 2,
  concurrency: 8,
  players: { sessions: 8, inputs: 10 },
  flood: { sessions: 200, inputs: 10 },
  maxP95Ratio: 1.5,
};

/**
 * Issue 33's counts (`--scenario counts`): on one stack, closed-loop narrator-only sessions, then
 * Emberback sessions with every plugin; round trips per turn of each phase against the issue's targets.
 */
export interface CountsSpec {
  name: 'counts';
  latencyMs: number;
  workers: number;
  concurrency: number;
  dbPoolSize?: number;
  /** Closed-loop sessions of each phase, each `inputs` turns. */
  sessions: number;
  inputs: number;
  /** Warm-up turns of each kind before the windows (`--warmup`); none given: 2 per worker of each kind. */
  warmupTurns?: number;
}

export const COUNTS_SCENARIO: CountsSpec = { name: 'counts', latencyMs: 0, workers: 2, concurrency: 4, sessions: 4, inputs: 10 };

/** `--scenario noisy|counts`: one scenario run, its targets checked at the end (`verdict: false` under `--no-verdict`). */
export interface ScenarioOptions {
  suite: 'scenario';
  scenario: NoisySpec | CountsSpec;
  verdict: boolean;
}

export const SCENARIOS = ['noisy', 'counts'] as const;

export const QUICK_SUITE: RunSpec[] = [{ name: 'quick', sessions: 4, inputs: 2, latencyMs: 200, workers: 1, concurrency: 4, note: 'smoke' }];

export const USAGE = `usage: npm run bench:load -- [options]
  (no options)            the acceptance suite of issue 9: runs a..e
  --suite quick           a small smoke run (4 sessions x 2 inputs, 1 worker x 4, 200 ms)
  --only a,c              only these runs of the acceptance suite
  --sessions N --inputs N --latency-ms N --workers N --concurrency N
                          one run with these settings (each has the default of run a)
  --db-pool-size N        COVEL_DB_POOL_SIZE of the API and workers (default: the engine's)
  --scenario noisy        issue 32's noisy neighbour: tenant B's 8 closed-loop players x 10 turns alone,
                          then while tenant A posts 200 sessions x 10 inputs at once (2 workers x 8,
                          200 ms); target: B's p95 with the flood <= 1.5x B's p95 alone (exit 1 if not).
                          With it, --sessions/--inputs size A's flood and --workers, --concurrency,
                          --latency-ms, --db-pool-size change the stack; --no-verdict: exit 0 on a missed target
  --scenario counts       issue 33's round trips per turn: 4 narrator-only sessions x 10 turns, then 4 Emberback
                          sessions (every plugin) x 10 turns (2 workers x 4, 0 ms model); Redis commands, PG
                          statements and transactions, HTTP, CPU ms, log bytes per turn and the top commands and
                          statements; targets: narrator <= 30 commands, <= 6 transactions, <= 12 statements,
                          <= 12 ms CPU (API + workers), Emberback <= 3x narrator (exit 1 if not, --no-verdict: 0).
                          --sessions/--inputs size each phase; --workers, --concurrency, --latency-ms, --db-pool-size,
                          --warmup (turns of each kind)
  --warmup N              N warm-up turns (closed-loop) before a run's window or the counts phases (default
                          2 per worker): warm processes, whose V8 has compiled the turn's code, as a
                          deployment's long-running ones (the first few hundred turns of a process pay for
                          that compiling too); not with --scenario noisy
  --write-docs            then rewrite the bench:load block of docs/benchmarks.md from the results
Needs PostgreSQL (COVEL_BENCH_PG_URL, default postgres://postgres@127.0.0.1:5432/test, an admin
database) and Redis (COVEL_BENCH_REDIS_URL, default redis://127.0.0.1:6379).`;

const count = (max: number) => z.coerce.number().int().min(1).max(max);

const Flags = z
  .object({
    suite: z.enum(['acceptance', 'quick']).optional(),
    only: z
      .string()
      .transform((s) => s.split(',').map((x) => x.trim()))
      .refine((names) => names.every((n) => ACCEPTANCE_SUITE.some((r) => r.name === n)), `one or more of ${ACCEPTANCE_SUITE.map((r) => r.name).join(', ')}`)
      .optional(),
    sessions: count(10_000).optional(),
    inputs: count(1_000).optional(),
    'latency-ms': z.coerce.number().int().min(0).max(600_000).optional(),
    workers: count(64).optional(),
    concurrency: count(1_000).optional(),
    'db-pool-size': count(1_000).optional(),
    warmup: count(100_000).optional(),
    scenario: z.enum(SCENARIOS, { message: `one of ${SCENARIOS.join(', ')}` }).optional(),
    'no-verdict': z.boolean().optional(),
    help: z.boolean().optional(),
  })
  .strict();

export class UsageError extends Error {}

/** Reads the command line; throws a UsageError naming the bad flag. */
export function parseBenchArgs(argv: readonly string[]): BenchOptions | ScenarioOptions | 'help' {
  let values: Record<string, string | boolean | undefined>;
  try {
    values = parseArgs({
      args: [...argv],
      strict: true,
      options: {
        suite: { type: 'string' },
        only: { type: 'string' },
        sessions: { type: 'string' },
        inputs: { type: 'string' },
        'latency-ms': { type: 'string' },
        workers: { type: 'string' },
        concurrency: { type: 'string' },
        'db-pool-size': { type: 'string' },
        warmup: { type: 'string' },
        scenario: { type: 'string' },
        'no-verdict': { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
    }).values;
  } catch (error) {
    throw new UsageError(`${error instanceof Error ? error.message : String(error)}\n${USAGE}`);
  }
  const parsed = Flags.safeParse(values);
  if (!parsed.success) {
    throw new UsageError(`${parsed.error.issues.map((i) => `--${i.path.join('.')}: ${i.message}`).join('; ')}\n${USAGE}`);
  }
  const f = parsed.data;
  if (f.help) return 'help';
  const single = f.sessions ?? f.inputs ?? f['latency-ms'] ?? f.workers ?? f.concurrency;
  const pool = f['db-pool-size'] === undefined ? {} : { dbPoolSize: f['db-pool-size'] };
  if (f.warmup !== undefined && f.scenario === 'noisy') throw new UsageError(`--warmup does not go with --scenario noisy\n${USAGE}`);
  const warmup = f.warmup === undefined ? {} : { warmupTurns: f.warmup };
  if (f.scenario) {
    if (f.suite || f.only) throw new UsageError(`--suite and --only do not go with --scenario\n${USAGE}`);
    // the stack's settings, each from its flag or the scenario's default
    const stack = (base: NoisySpec | CountsSpec) => ({
      latencyMs: f['latency-ms'] ?? base.latencyMs,
      workers: f.workers ?? base.workers,
      concurrency: f.concurrency ?? base.concurrency,
      ...pool,
    });
    const verdict = !f['no-verdict'];
    if (f.scenario === 'counts') {
      const base = COUNTS_SCENARIO;
      return {
        suite: 'scenario',
        verdict,
        scenario: { ...base, ...stack(base), sessions: f.sessions ?? base.sessions, inputs: f.inputs ?? base.inputs, ...warmup },
      };
    }
    const base = NOISY_SCENARIO;
    return {
      suite: 'scenario',
      verdict,
      scenario: { ...base, ...stack(base), flood: { sessions: f.sessions ?? base.flood.sessions, inputs: f.inputs ?? base.flood.inputs } },
    };
  }
  if (f['no-verdict']) throw new UsageError(`--no-verdict goes with --scenario (the suite has no target to skip)\n${USAGE}`);
  if (single !== undefined) {
    if (f.suite || f.only) throw new UsageError(`--suite and --only do not go with the flags of a single run\n${USAGE}`);
    const base = ACCEPTANCE_SUITE[0];
    return {
      suite: 'custom',
      runs: [
        {
          name: 'custom',
          sessions: f.sessions ?? base.sessions,
          inputs: f.inputs ?? base.inputs,
          latencyMs: f['latency-ms'] ?? base.latencyMs,
          workers: f.workers ?? base.workers,
          concurrency: f.concurrency ?? base.concurrency,
          ...pool,
          ...warmup,
        },
      ],
    };
  }
  if (f.suite === 'quick') {
    if (f.only) throw new UsageError(`--only picks runs of the acceptance suite\n${USAGE}`);
    return { suite: 'quick', runs: QUICK_SUITE.map((r) => ({ ...r, ...pool, ...warmup })) };
  }
  const runs = f.only ? ACCEPTANCE_SUITE.filter((r) => f.only!.includes(r.name)) : ACCEPTANCE_SUITE;
  return { suite: 'acceptance', runs: runs.map((r) => ({ ...r, ...pool, ...warmup })) };
}
