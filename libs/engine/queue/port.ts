import { z } from 'zod';
import { UnavailableError } from '../../errors';
import { TraceCarrierSchema } from '../../telemetry';

/**
 * The turn queue port. Producers (the API, the hand-off at the end of a turn, the sweeper) enqueue
 * turn jobs; workers consume turn jobs and the runtime jobs a turn job adds as its children. A
 * third kind, world generation jobs (`POST /v1/worlds/generate`), stands alone: no parent, no
 * children, its own queue. Drivers: in-process (the embedded default) and BullMQ; both pass
 * `queue/test/queue-conformance.ts`.
 */

const id = z.string().min(1);

/**
 * One execution (one player input) of a session; the turn job is its step machine. `trace`: the
 * W3C trace context of the span that enqueued it (tracing on only; see libs/telemetry). A malformed
 * one is dropped (the job starts a trace of its own), never a reason to fail the job.
 */
export const TurnJobSchema = z.object({ executionId: id, sessionId: id, tenantId: id, trace: TraceCarrierSchema.optional().catch(undefined) });
export type TurnJob = z.infer<typeof TurnJobSchema>;

/** One runtime of one claimed attempt of an execution: a child job of the execution's turn job. */
export const RuntimeJobSchema = TurnJobSchema.extend({ attempt: z.number().int().positive(), pluginId: id, runtimeId: id });
export type RuntimeJob = z.infer<typeof RuntimeJobSchema>;

/**
 * One world generation job (`POST /v1/worlds/generate`): the worker reads what to do from the
 * job's stream (its id is the job id); `trace` as for a turn job.
 */
export const WorldGenerationJobSchema = z.object({ jobId: id, tenantId: id, trace: TraceCarrierSchema.optional().catch(undefined) });
export type WorldGenerationJob = z.infer<typeof WorldGenerationJobSchema>;

/** done: the job ends. later: the job runs again after the delay, no attempt spent. */
export type JobOutcome = { kind: 'done' } | { kind: 'later'; delayMs: number };

/**
 * What a turn job does next. awaitChildren: the queue adds the children (idempotent by their job
 * id), and runs the turn job again once every one of them has ended (completed, or failed for good).
 */
export type TurnStep = JobOutcome | { kind: 'awaitChildren'; children: RuntimeJob[] };

export interface JobAttempt {
  /** Attempts that already failed before this one (a `later` or a wait for children spends none). */
  attemptsMade: number;
  maxAttempts: number;
}

/** What a turn job keeps between its runs (BullMQ: in the job's data). */
export interface TurnJobContext extends JobAttempt {
  /** The execution attempt this job claimed, or null before its first claim (in this run, or kept with the job). */
  readonly claimedAttempt: number | null;
  /**
   * A name of this job that every run of it shares and no other job has (a job added anew after it
   * ended or was lost gets another), when the queue gives one: a claim records it (`execution.started`'s
   * `claimant`), and a later run of the job finds its claim in the log, so `recordClaim` need not store it.
   */
  readonly claimant?: string;
  /**
   * Keeps the claimed attempt for the rest of this run; without a `claimant`, stores it with the job,
   * so a later run of the same job does not claim again.
   */
  recordClaim(attempt: number): Promise<void>;
  /**
   * Adds runtime jobs as this job's children now, while this run goes on (idempotent by their job
   * id, like awaitChildren's): they start without waiting for the run to return. The run's
   * `awaitChildren` lists them again to wait for them; one that has ended by then is added anew.
   */
  startChildren(children: RuntimeJob[]): Promise<void>;
}

/**
 * A thrown error fails the attempt: the job is retried with backoff up to `maxAttempts`, or ends at
 * once when `isPermanentFailure(error)`. A runtime job that fails for good still counts as ended for
 * its parent turn job (the turn job then reads what happened from the event log).
 */
export interface QueueHandlers {
  turn(job: TurnJob, ctx: TurnJobContext): Promise<TurnStep>;
  runtime(job: RuntimeJob, attempt: JobAttempt): Promise<JobOutcome>;
  /** World generation jobs; without it they wait for a consumer that has it. Retried like a runtime job. */
  world?(job: WorldGenerationJob, attempt: JobAttempt): Promise<JobOutcome>;
}

export interface QueueHealth {
  kind: 'bullmq' | 'in-process';
  ok: boolean;
  /** The driver's connection state (for BullMQ the ioredis status: ready, reconnecting, ...). */
  state: string;
}

/** Jobs of one queue in one state, read on a metrics scrape. */
export interface QueueDepth {
  /** `covel-turns`, `covel-runtimes` or `covel-worlds`. */
  queue: string;
  /** waiting, active, delayed, waiting-children, ... (the driver's states); `held` (turns): waiting for admission (fair scheduling). */
  state: string;
  jobs: number;
}

/** Told when a job starts for the first time, `waitedMs` after it was enqueued (metrics). */
export type JobStartedListener = (info: { queue: string; waitedMs: number }) => void;

/** Fair scheduling across tenants: the turn queue's admission (see `fair.ts`). */
/** Where a tenant's cap on executions in flight comes from (tenant settings); null: the default. */
export interface TenantCaps {
  maxInFlight(tenantId: string): Promise<number | null>;
}

export interface FairnessOptions {
  /**
   * How many executions may be admitted at once across all tenants. BullMQ default: the total
   * concurrency of the consumers alive (each registers it every tick); in-process: its concurrency.
   */
  window?: number;
  /** A tenant's cap on executions in flight when `tenantCaps` has none for it; default: none (the window). */
  tenantMaxInFlight?: number;
  /**
   * Per-tenant caps (tenant settings); asked at each enqueue (keep it cheap: cached), its answer
   * stored with the tenant's admission state so a dispatch in another process applies it. A failing
   * source means the default cap.
   */
  tenantCaps?: TenantCaps;
}

export interface TurnProducer {
  /**
   * Idempotent per execution: enqueueing a turn job that still exists (held for admission, waiting,
   * delayed or waiting for its children) is a no-op. While a worker runs it, whose run may have read
   * the log before what the enqueue is for (a resume appended after the suspension, the job not yet
   * ended), the enqueue is kept and made once more at the job's end (several such: one). Fair
   * across tenants: the job is added when admitted (`FairnessOptions`), else held on its tenant's
   * ready list until a place frees.
   * Bounded: rejects with `UnavailableError` (dependency `queue`) when the queue is down or does not
   * take the job in time, never waits for a reconnect.
   */
  enqueue(job: TurnJob): Promise<void>;
  /** Idempotent per world generation job and bounded, like `enqueue`. */
  enqueueWorldGeneration(job: WorldGenerationJob): Promise<void>;
  /** Synchronous and cheap: false when the queue is known to be down (an enqueue would fail now). */
  isAvailable(): boolean;
  /** A bounded probe for `/health`; never throws. */
  health(): Promise<QueueHealth>;
  /** Jobs per queue and state, for the metrics scrape (rejects when the queue cannot be read). */
  depth(): Promise<QueueDepth[]>;
}

export interface TurnConsumer {
  /** Starts taking jobs (once per queue). */
  consume(handlers: QueueHandlers): void;
}

/** How a queue stops (`close`); without a grace period it waits for the running jobs however long they take. */
export interface QueueCloseOptions {
  /** How long the jobs running now may take to end once no new job is taken. */
  graceMs?: number;
  /**
   * Told once when the grace period is over with jobs still running: it asks them to hand themselves
   * back (the engine aborts their model calls; each job ends `later`, no attempt spent).
   */
  onGraceOver?: () => void;
  /** How long the handed-back jobs may take to end before the queue stops waiting for them (`HAND_BACK_MS`). */
  handBackMs?: number;
}

/** How long jobs asked to hand themselves back may take before a closing queue leaves them (as a crash would). */
export const HAND_BACK_MS = 2_000;

export interface TurnQueue extends TurnProducer, TurnConsumer {
  /**
   * Takes no new job and resolves once the jobs running now have ended (drains); with a grace period,
   * once they have ended or been handed back, or when `handBackMs` after it they still run (left to
   * recovery: BullMQ's stalled-job check, the embedded default's resume at start-up). A job ending
   * `later` while the queue closes is handed back: BullMQ keeps it delayed for any worker, the
   * in-process queue leaves it to the next start (its jobs live in memory; the log holds the work).
   */
  close(options?: QueueCloseOptions): Promise<void>;
}

/**
 * Whether `work` settles within `ms` (then true); false when the time ran out (`work` goes on).
 * For a queue's close: the waits of a grace period.
 */
export async function settlesWithin(work: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  try {
    return await Promise.race([work.then(() => true), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * A closing queue's wait for its running jobs (`drained`), bounded by the options: the grace period,
 * then `onGraceOver`, then the hand-back time. Resolves true when they ended, false when left running.
 */
export async function drainWithin(drained: Promise<unknown>, options: QueueCloseOptions = {}): Promise<boolean> {
  if (options.graceMs === undefined) {
    await drained;
    return true;
  }
  if (await settlesWithin(drained, options.graceMs)) return true;
  options.onGraceOver?.();
  return settlesWithin(drained, options.handBackMs ?? HAND_BACK_MS);
}

/** Attempts and backoff of every job kind; the same defaults for both drivers. */
export interface RetryPolicy {
  turnAttempts: number;
  runtimeAttempts: number;
  worldAttempts: number;
  /** Exponential backoff: the n-th retry waits backoffMs × 2^(n-1). */
  backoffMs: number;
}

export const TURN_JOB_ATTEMPTS = 5;
export const RUNTIME_JOB_ATTEMPTS = 5;
export const WORLD_JOB_ATTEMPTS = 5;
export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  turnAttempts: TURN_JOB_ATTEMPTS,
  runtimeAttempts: RUNTIME_JOB_ATTEMPTS,
  worldAttempts: WORLD_JOB_ATTEMPTS,
  backoffMs: 1_000,
};

/** What a caller is told to wait when the queue cannot be reached. */
export const QUEUE_RETRY_AFTER_SECONDS = 2;

export const queueUnavailable = (message: string, cause?: unknown) => new UnavailableError('queue', message, QUEUE_RETRY_AFTER_SECONDS, { cause });

export const TURN_QUEUE_NAME = 'covel-turns';
export const RUNTIME_QUEUE_NAME = 'covel-runtimes';
export const WORLD_QUEUE_NAME = 'covel-worlds';

/** BullMQ reserves ':' in job ids (its key separator). */
const safe = (part: string) => part.replaceAll(':', '_');

/** The job id is derived from the execution id, so a retried enqueue adds nothing. */
export const turnJobId = (executionId: string) => `turn-${safe(executionId)}`;

/** The job id is derived from the world generation job's id, so a retried enqueue adds nothing. */
export const worldJobId = (jobId: string) => `world-${safe(jobId)}`;

/**
 * One runtime job per (execution, attempt, runtime): a turn job that adds its children again adds
 * nothing, a new attempt gets new jobs. `_` is in neither a plugin/runtime id nor a UUID.
 */
export const runtimeJobId = (job: RuntimeJob) => `rt_${safe(job.executionId)}_${job.attempt}_${safe(job.pluginId)}_${safe(job.runtimeId)}`;

/** The turn job of a runtime job (its parent); the trace context goes with it. */
export const turnJobOf = (job: TurnJob): TurnJob => ({
  executionId: job.executionId,
  sessionId: job.sessionId,
  tenantId: job.tenantId,
  ...(job.trace ? { trace: job.trace } : {}),
});

/** Waits backoff × 2^(attemptsMade − 1) after the attemptsMade-th failure (BullMQ's exponential backoff). */
export const backoffDelay = (policy: RetryPolicy, attemptsMade: number) => policy.backoffMs * 2 ** (attemptsMade - 1);
