import { AsyncLocalStorage } from 'node:async_hooks';
import { randomBytes } from 'node:crypto';
import type { Job, JobsOptions, Queue, Worker } from 'bullmq';
import type IORedis from 'ioredis';
import { z } from 'zod';
import { UnavailableError } from '../../errors';
import { isPermanentFailure } from '../errors';
import type { LogFields, Logger } from '../logging/logger';
import { jobLogFields } from '../logging';
import { withTraceCarrier } from '../../telemetry';
import {
  DEFAULT_RETRY_POLICY,
  drainWithin,
  type FairnessOptions,
  type JobStartedListener,
  type QueueCloseOptions,
  type QueueDepth,
  type QueueHandlers,
  type QueueHealth,
  queueUnavailable,
  type RetryPolicy,
  RUNTIME_QUEUE_NAME,
  type RuntimeJob,
  RuntimeJobSchema,
  runtimeJobId,
  TURN_QUEUE_NAME,
  type TurnJob,
  type TurnJobContext,
  turnJobId,
  turnJobOf,
  TurnJobSchema,
  type TurnQueue,
  WORLD_QUEUE_NAME,
  type WorldGenerationJob,
  WorldGenerationJobSchema,
  worldJobId,
} from './port';
import { ADMIT_SCRIPT, capOf, LEAVE_SCRIPT, RELEASE_SCRIPT, TICK_SCRIPT } from './fair';
import { withDrainedHint, withLeanFetch } from './fetch';
import { admitAndAdd, withAdmitAdd } from './admit-add';
import { bullmq } from './load-bullmq';
import { redisClient } from '../redis/load-ioredis';

/** Bound of one enqueue (and of the health probe's PING): under the API's 2 s answer bound. */
export const ENQUEUE_TIMEOUT_MS = 1_500;
const PING_TIMEOUT_MS = 1_000;

/**
 * How this process takes jobs (only a process that calls `consume`).
 *
 * Recovery time versus false alarms: a running job's lock lasts `lockDurationMs` and is renewed
 * every half of it; every `stalledIntervalMs` one worker looks for active jobs whose lock has
 * expired and moves them back to wait. A killed worker's job (a turn step or a runtime call) is
 * therefore taken by another worker between lockDuration/2 and lockDuration + stalledInterval after
 * the kill (defaults 5 s and 2 s: 2.5–7 s). Shorter means more Redis calls and a smaller margin: an
 * event loop blocked longer than lockDuration loses the lock and the job runs again elsewhere. The
 * attempt fencing makes that safe (a stale attempt cannot append; an output already produced is
 * reused, never produced twice), it only costs a repeated model call.
 */
export interface BullMqConsumerOptions {
  /** Jobs of each queue (turn steps, runtime calls, world generations) this process runs at once. */
  concurrency: number;
  lockDurationMs: number;
  stalledIntervalMs: number;
  /** A killed worker's job comes back this many times before BullMQ gives up on it. */
  maxStalledCount?: number;
  /** Recorded as the job's `processedBy` (the worker id). */
  name?: string;
}

export interface BullMqOptions {
  redisUrl: string;
  /** Key prefix, so several deployments (or test runs) can share one Redis. */
  prefix?: string;
  /** How long an enqueue may wait for Redis before it fails as unavailable. */
  enqueueTimeoutMs?: number;
  retry?: Partial<RetryPolicy>;
  consumer?: BullMqConsumerOptions;
  /** Told once when the connection is lost and once when it is back; and of failed job attempts. */
  logger?: Pick<Logger, 'log' | 'warn'>;
  /** Told of each job's first start (metrics). */
  onJobStarted?: JobStartedListener;
  /** Fair scheduling across tenants (see `fair.ts`): the window, the tenants' caps, the consumers' tick. */
  fairness?: BullMqFairnessOptions;
}

export interface BullMqFairnessOptions extends FairnessOptions {
  /** How often a consumer registers its concurrency (the auto window), mends lost admissions and dispatches. */
  tickMs?: number;
  /** How long an admission may go unchecked before a tick looks whether its turn job still exists. */
  staleAfterMs?: number;
}

/** A consumer's tick: a registration lasts three of them (a consumer gone shrinks the auto window after that). */
export const FAIR_TICK_MS = 5_000;
const FAIR_STALE_AFTER_MS = 30_000;

/** The admission scripts as commands on a connection (ioredis sends EVALSHA, EVAL once when Redis lacks it). */
interface FairCommands {
  covelFairAdmit(...args: (string | number)[]): Promise<number>;
  covelFairRelease(...args: (string | number)[]): Promise<string[]>;
  covelFairTick(...args: (string | number)[]): Promise<(string | number)[]>;
  covelFairLeave(...args: (string | number)[]): Promise<number>;
}

function withFairCommands(connection: IORedis): IORedis & FairCommands {
  connection.defineCommand('covelFairAdmit', { numberOfKeys: 0, lua: ADMIT_SCRIPT });
  connection.defineCommand('covelFairRelease', { numberOfKeys: 0, lua: RELEASE_SCRIPT });
  connection.defineCommand('covelFairTick', { numberOfKeys: 0, lua: TICK_SCRIPT });
  connection.defineCommand('covelFairLeave', { numberOfKeys: 0, lua: LEAVE_SCRIPT });
  return connection as IORedis & FairCommands;
}

/** The connection of BullMQ workers: blocking commands, so it retries forever (BullMQ requires it). */
/**
 * Deletes every key of a queue prefix (all queues of a deployment or a test run), a SCAN page at a
 * time; for tear-downs of throwaway prefixes, never for a live deployment's.
 */
export async function deleteQueueKeys(redisUrl: string, prefix: string): Promise<void> {
  const redis = redisClient(redisUrl, { maxRetriesPerRequest: 2 });
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
      if (keys.length) await redis.del(...keys);
      cursor = next;
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}

export function redisConnection(redisUrl: string): IORedis {
  return redisClient(redisUrl, { maxRetriesPerRequest: null });
}

/**
 * The producer's connection: fails fast instead of queueing commands while Redis is away
 * (the producer is asked from an HTTP request, which must answer in bounded time).
 */
function producerConnection(redisUrl: string): IORedis {
  return redisClient(redisUrl, { maxRetriesPerRequest: 1, enableOfflineQueue: false });
}

function bounded<T>(work: Promise<T>, ms: number, onTimeout: () => Error): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(onTimeout()), ms);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

/** A turn job's data: the job, and the attempt it claimed (written with `updateData` by earlier versions; now found in the log by its `claimant`). */
const TurnJobDataSchema = TurnJobSchema.extend({ claimedAttempt: z.number().int().positive().optional() });
/** A held turn job on its tenant's ready list: the job, and when it was enqueued (ms). */
const HeldTurnJobSchema = TurnJobSchema.extend({ enqueuedAt: z.number().int().positive().optional() });
type TurnJobData = z.infer<typeof TurnJobDataSchema>;

/** A turn job's run under way, and the enqueue of its session's next execution it handed off to (kept for its release). */
interface TurnRun {
  tenantId: string;
  sessionId: string;
  /** False once the run has returned: an enqueue after that is made at once. */
  open: boolean;
  next: { job: TurnJob; enqueuedAt: number } | null;
}

/** Job data read back from Redis is a boundary: a malformed job can never succeed. */
function parseData<T>(schema: z.ZodType<T>, job: Job): T {
  const parsed = schema.safeParse(job.data);
  if (!parsed.success) throw new (bullmq().UnrecoverableError)(`job ${job.id}: malformed data: ${parsed.error.message}`);
  return parsed.data;
}

/** The ids of a failed job for its log line (what its data holds of them). */
function failedJobFields(job: Job): LogFields {
  const world = WorldGenerationJobSchema.safeParse(job.data);
  if (job.queueName === WORLD_QUEUE_NAME && world.success) return jobLogFields(world.data);
  const runtime = RuntimeJobSchema.safeParse(job.data);
  if (runtime.success) return jobLogFields(runtime.data);
  const turn = TurnJobDataSchema.safeParse(job.data);
  return turn.success ? jobLogFields(turn.data, turn.data.claimedAttempt) : {};
}

/** A failure retrying cannot fix is BullMQ's UnrecoverableError: the job fails at once. */
function forBullMq(error: unknown): unknown {
  return isPermanentFailure(error) ? new (bullmq().UnrecoverableError)(`${error.code}: ${error.message}`) : error;
}

/**
 * The turn queue on BullMQ, two queues: `covel-turns` holds the turn jobs (short steps: claim,
 * fan-out, commit, hand-off), `covel-runtimes` their runtime children (model calls, seconds each).
 * Two queues so that a turn's next step (the barrier after a stage, the commit) never waits for a
 * free slot behind model calls of other turns: each queue has its own workers and concurrency.
 * BullMQ flows across queues are native (the child names its parent's qualified queue name). A
 * third queue, `covel-worlds`, holds the world generation jobs (minutes of model calls each),
 * apart from both: a world being written never takes a slot a turn needs.
 */
export class BullMqTurnQueue implements TurnQueue {
  private readonly connection: IORedis & FairCommands;
  private readonly queue: Queue;
  private readonly retry: RetryPolicy;
  private consumer: {
    connection: IORedis & FairCommands;
    runtimes: Queue;
    /** The turn queue on the consumer's connection: the adds of what a release or a tick admitted. */
    turns: Queue;
    workers: Worker[];
    /** This consumer's name in the auto window's registrations, and the stop of its tick. */
    name: string;
    stopTicking: () => Promise<void>;
    /** The releases under way (the jobs that ended while closing): awaited before the connection goes. */
    releasing: Set<Promise<void>>;
  } | null = null;
  /** The runtime queue as the producer's connection sees it (depth, the dashboard); made when first asked. */
  private runtimesView: Queue | null = null;
  /** The world generation queue on the producer's connection (enqueues, depth, the dashboard); made when first asked. */
  private worldsView: Queue | null = null;
  /** starting: first connect in progress (an enqueue waits for it, bounded); down: lost or refused. */
  private state: 'starting' | 'up' | 'down' = 'starting';
  private closed = false;
  /** Whether an enqueue's admission and add go as one script call (`admitAndAdd`): BullMQ's add script was found. */
  private readonly admitAdd: boolean;
  /** The turn job run under way in this async context (an enqueue of its session's next execution is kept for its release). */
  private readonly turnRuns = new AsyncLocalStorage<TurnRun>();
  /** The hand-offs of turn jobs that returned done, by job id, until their release admits them. */
  private readonly handedOff = new Map<string, { job: TurnJob; enqueuedAt: number }>();

  constructor(private readonly options: BullMqOptions) {
    this.retry = { ...DEFAULT_RETRY_POLICY, ...options.retry };
    this.connection = withFairCommands(producerConnection(options.redisUrl));
    this.admitAdd = withAdmitAdd(this.connection);
    this.queue = new (bullmq().Queue)(TURN_QUEUE_NAME, { connection: this.connection, prefix: this.prefix });
    this.connection.on('ready', () => {
      if (this.state === 'down') this.options.logger?.log('queue: redis connection is back');
      this.state = 'up';
    });
    const lost = () => {
      if (this.connection.status === 'ready') return;
      if (this.state === 'up' && !this.closed) this.options.logger?.warn('queue: redis connection lost; enqueues fail at once until it is back');
      this.state = 'down';
    };
    this.connection.on('close', lost);
    this.connection.on('error', lost);
  }

  private get prefix() {
    return this.options.prefix ?? 'covel';
  }

  /**
   * What every admission script is told first: its keys' base, the window (0: the auto window), the
   * default cap (0: none), the turn jobs' key prefix. The window and the default cap are this
   * process's: every process of a deployment must be given the same (`COVEL_SCHEDULER_WINDOW`,
   * `COVEL_TENANT_MAX_IN_FLIGHT`), else each decision applies the values of the process making it.
   */
  private fairArgs(): (string | number)[] {
    const fairness = this.options.fairness;
    return [`${this.prefix}:fair`, fairness?.window ?? 0, fairness?.tenantMaxInFlight ?? 0, `${this.prefix}:${TURN_QUEUE_NAME}:`];
  }

  /** False once the connection is known lost (or refused); true while up or still making its first connection. */
  isAvailable(): boolean {
    return !this.closed && this.state !== 'down';
  }

  async health(): Promise<QueueHealth> {
    const state = this.connection.status;
    if (this.closed || state !== 'ready') return { kind: 'bullmq', ok: false, state };
    try {
      await bounded(this.connection.ping(), PING_TIMEOUT_MS, () => queueUnavailable('no answer to PING'));
      return { kind: 'bullmq', ok: true, state };
    } catch {
      return { kind: 'bullmq', ok: false, state: 'no answer' };
    }
  }

  async depth(): Promise<QueueDepth[]> {
    const states = ['waiting', 'active', 'delayed', 'waiting-children', 'prioritized', 'paused', 'failed'] as const;
    const read = async (queue: Queue) => {
      const counts = await bounded(queue.getJobCounts(...states), PING_TIMEOUT_MS, () => queueUnavailable('no answer to the job counts'));
      return states.map((state) => ({ queue: queue.name, state, jobs: counts[state] ?? 0 }));
    };
    const held = async (): Promise<QueueDepth> => {
      const jobs = await bounded(
        this.queue.waitUntilReady().then(() => this.connection.scard(`${this.prefix}:fair:held`)),
        PING_TIMEOUT_MS,
        () => queueUnavailable('no answer to the held count'),
      );
      return { queue: TURN_QUEUE_NAME, state: 'held', jobs };
    };
    const [counts, heldJobs] = await Promise.all([Promise.all(this.queues().map(read)), held()]);
    return [...counts.flat(), heldJobs];
  }

  /** The BullMQ queues (turns, runtimes, world generations) on the producer's connection: for the depth and the queue dashboard. */
  queues(): Queue[] {
    this.runtimesView ??= new (bullmq().Queue)(RUNTIME_QUEUE_NAME, { connection: this.connection, prefix: this.prefix });
    return [this.queue, this.runtimesView, this.worlds()];
  }

  private worlds(): Queue {
    this.worldsView ??= new (bullmq().Queue)(WORLD_QUEUE_NAME, { connection: this.connection, prefix: this.prefix });
    return this.worldsView;
  }

  /**
   * One admission script call (admitted or held on the tenant's ready list, atomically), then the
   * add of an admitted job (also when it was admitted already but its job is gone: a lost add is
   * mended, the job id makes it idempotent); nothing more when its job is there already.
   */
  async enqueue(job: TurnJob): Promise<void> {
    const data = turnJobOf(withTraceCarrier(job));
    const run = this.turnRuns.getStore();
    if (run?.open && run.tenantId === job.tenantId && run.sessionId === job.sessionId) {
      // the hand-off of a turn job running here to its session's next execution: admitted by the
      // job's release, in the same script call (kept with the job until then; see processTurn)
      run.next = { job: data, enqueuedAt: Date.now() };
      return;
    }
    await this.admit(data, true);
  }

  /**
   * The admission (and add) of a turn job. `keep`: a producer's enqueue, kept when the job runs (see
   * fair.ts's `enqueue`); false for a turn job's hand-off, whichever path makes it (its release, or
   * `enqueueHandedOff` after a `later`, a wait for children, a failure): a hand-off is never kept.
   */
  private async admit(data: TurnJob, keep: boolean): Promise<void> {
    await this.add('turn', async () => {
      const cap = await capOf(this.options.fairness, data.tenantId);
      await this.queue.waitUntilReady(); // the first connection (this connection queues no command meanwhile)
      const enqueuedAt = Date.now();
      const held = JSON.stringify({ ...data, enqueuedAt });
      const admission = [...this.fairArgs(), data.tenantId, data.executionId, held, cap, keep ? 1 : 0];
      const opts = this.turnJobOptions(data, enqueuedAt);
      if (this.admitAdd) {
        // admitted: its job added in the same call (issue 33: one round trip per input)
        await admitAndAdd({ connection: this.connection, queue: this.queue, name: 'turn', data, opts, admission });
        return;
      }
      const admitted = await this.connection.covelFairAdmit(...admission);
      if (admitted === 1) await this.queue.add('turn', data, opts);
    });
  }

  /** `enqueuedAt` is the job's timestamp: its wait (the metrics) counts from its enqueue, held time included. */
  private turnJobOptions(job: TurnJob, enqueuedAt: number): JobsOptions & { jobId: string } {
    return {
      timestamp: enqueuedAt,
      jobId: turnJobId(job.executionId),
      attempts: this.retry.turnAttempts,
      backoff: { type: 'exponential', delay: this.retry.backoffMs },
      // removed when done, so an execution found pending again (hand-off, sweeper) gets a new job
      removeOnComplete: true,
      removeOnFail: true,
    };
  }

  /** Adds the turn jobs a release or a tick admitted (their JSON as the script answered it). */
  private async addAdmitted(turns: Queue, payloads: readonly unknown[]): Promise<void> {
    const jobs = payloads.flatMap((payload) => {
      const parsed = typeof payload === 'string' ? HeldTurnJobSchema.safeParse(JSON.parse(payload)) : null;
      return parsed?.success ? [parsed.data] : [];
    });
    if (jobs.length)
      await turns.addBulk(jobs.map(({ enqueuedAt, ...job }) => ({ name: 'turn', data: job, opts: this.turnJobOptions(job, enqueuedAt ?? Date.now()) })));
  }

  /**
   * The execution's turn job has ended for good and BullMQ has removed it (called from the worker's
   * `completed` and final `failed` events, so an enqueue of the same execution in between never
   * finds the old job: see RELEASE_SCRIPT): one script call frees its place and admits what waits
   * (round robin across tenants), then the admitted jobs are added. A failure is logged, not thrown:
   * a tick frees the place once the job is gone.
   */
  private async release(
    consumer: { connection: FairCommands; turns: Queue },
    job: Pick<TurnJob, 'tenantId' | 'executionId'>,
    next?: { job: TurnJob; enqueuedAt: number },
  ): Promise<void> {
    try {
      const enqueue = next
        ? [
            next.job.tenantId,
            next.job.executionId,
            JSON.stringify({ ...next.job, enqueuedAt: next.enqueuedAt }),
            await capOf(this.options.fairness, next.job.tenantId),
          ]
        : [];
      const admitted = await consumer.connection.covelFairRelease(...this.fairArgs(), job.tenantId, job.executionId, ...enqueue);
      await this.addAdmitted(consumer.turns, admitted);
    } catch (error) {
      this.options.logger?.warn(
        `queue: release of execution ${job.executionId} failed (${String(error)}); a consumer's tick frees it once its job is gone` +
          (next ? `, the sweeper enqueues execution ${next.job.executionId}` : ''),
      );
    }
  }

  /** A hand-off kept with a turn job that will not be released by this process after all: enqueued now (not kept: a hand-off). */
  private async enqueueHandedOff(next: { job: TurnJob } | null | undefined): Promise<void> {
    if (!next) return;
    try {
      await this.admit(next.job, false);
    } catch (error) {
      this.options.logger?.warn(`hand-off to execution ${next.job.executionId} failed (${String(error)}); the sweeper will enqueue it`);
    }
  }

  /**
   * A consumer's tick: registers its concurrency (the auto window), frees admissions whose turn job
   * is gone, dispatches (a cap raised, a window grown), adds what it admitted. One script call.
   */
  /** How long a consumer's registration lasts: three ticks (a consumer gone shrinks the auto window after that). */
  private registrationMs(): number {
    return 3 * (this.options.fairness?.tickMs ?? FAIR_TICK_MS);
  }

  private async tick(consumer: { connection: FairCommands; turns: Queue }, name: string, concurrency: number): Promise<void> {
    const [released, ...admitted] = await consumer.connection.covelFairTick(
      ...this.fairArgs(),
      name,
      concurrency,
      this.registrationMs(),
      this.options.fairness?.staleAfterMs ?? FAIR_STALE_AFTER_MS,
    );
    if (Number(released) > 0)
      this.options.logger?.warn(
        `queue: ${released} admitted execution(s) without a turn job freed (a process died between admitting and adding or before releasing, a release failed, a job removed by hand); an enqueue kept while such a job ran (a resume) is made anew`,
      );
    await this.addAdmitted(consumer.turns, admitted);
  }

  async enqueueWorldGeneration(job: WorldGenerationJob): Promise<void> {
    await this.add('world generation', () =>
      this.worlds().add('world', withTraceCarrier(job), {
        jobId: worldJobId(job.jobId),
        attempts: this.retry.worldAttempts,
        backoff: { type: 'exponential', delay: this.retry.backoffMs },
        // removed when done, so a job found unfinished again (the sweeper) gets a new one
        removeOnComplete: true,
        removeOnFail: true,
      }),
    );
  }

  /** One add to a queue, bounded: fails at once when Redis is known down, after the enqueue timeout otherwise. */
  private async add(what: string, add: () => Promise<unknown>): Promise<void> {
    // known down: fail at once; still starting: the add below waits for the first connection, bounded
    if (!this.isAvailable()) throw queueUnavailable(`the ${what} queue is unavailable (redis ${this.connection.status})`);
    const timeoutMs = this.options.enqueueTimeoutMs ?? ENQUEUE_TIMEOUT_MS;
    const added = add();
    // an add that loses the race may still land later: harmless, the job id makes it idempotent
    added.catch(() => undefined);
    try {
      await bounded(added, timeoutMs, () => queueUnavailable(`the ${what} queue did not take the job within ${timeoutMs} ms`));
    } catch (error) {
      if (error instanceof UnavailableError) throw error;
      throw queueUnavailable(`the ${what} queue failed: ${error instanceof Error ? error.message : String(error)}`, error);
    }
  }

  consume(handlers: QueueHandlers): void {
    if (this.consumer || this.closed) return;
    const options = this.options.consumer ?? { concurrency: 8, lockDurationMs: 5_000, stalledIntervalMs: 2_000 };
    const connection = redisConnection(this.options.redisUrl);
    // before any queue or worker on it loads BullMQ's scripts (see fetch.ts)
    const lean = withLeanFetch(connection);
    const workerOptions = {
      connection,
      prefix: this.prefix,
      concurrency: options.concurrency,
      lockDuration: options.lockDurationMs,
      stalledInterval: options.stalledIntervalMs,
      maxStalledCount: options.maxStalledCount ?? 10,
      ...(options.name ? { name: options.name } : {}),
    };
    const runtimes = new (bullmq().Queue)(RUNTIME_QUEUE_NAME, { connection, prefix: this.prefix });
    const fair = { connection: withFairCommands(connection), turns: new (bullmq().Queue)(TURN_QUEUE_NAME, { connection, prefix: this.prefix }) };
    const workers = [
      new (bullmq().Worker)(TURN_QUEUE_NAME, (job, token) => this.processTurn(handlers, runtimes, job, token), workerOptions),
      new (bullmq().Worker)(RUNTIME_QUEUE_NAME, (job, token) => this.processRuntime(handlers, job, token), workerOptions),
    ];
    const world = handlers.world?.bind(handlers);
    // world generation jobs only where a handler runs them
    if (world) workers.push(new (bullmq().Worker)(WORLD_QUEUE_NAME, (job, token) => this.processWorld(world, job, token), workerOptions));
    // a fetch that took the last waiting job says so: the worker blocks next, no empty fetch (see fetch.ts)
    if (lean) for (const worker of workers) withDrainedHint(worker);
    let failing = false;
    // without a listener an 'error' event would crash the process; one line per outage
    const onError = (error: Error) => {
      if (!failing && !this.closed) this.options.logger?.warn(`queue consumer: ${String(error)}`);
      failing = true;
    };
    runtimes.on('error', onError);
    fair.turns.on('error', onError);
    for (const worker of workers) worker.on('error', onError);
    for (const worker of workers) {
      worker.on('active', () => (failing = false));
      worker.on('failed', (job, error) => {
        const attempts = job?.opts.attempts ?? 1;
        const willRetry = !(error instanceof bullmq().UnrecoverableError) && (job?.attemptsMade ?? attempts) < attempts;
        // the error's message only as a field (it may quote the model: written with COVEL_LOG_PLAYER_TEXT only)
        this.options.logger?.warn(`${job?.name ?? 'job'} job ${job?.id ?? '?'} failed${willRetry ? ', will retry' : ' for good'}`, {
          ...(job ? failedJobFields(job) : {}),
          err: error,
        });
      });
    }
    // A turn job's end for good frees its execution's place once BullMQ has removed the job: done,
    // or failed for good (`finishedOn` is set only then: out of attempts, UnrecoverableError, an
    // error outside the handler such as a lost lock on the last attempt or unreadable data, a job
    // stalled too often: BullMQ fails it as unrecoverable when a worker next takes it). What never
    // reaches these (a job removed by hand, a process dying before its release, a failed release)
    // a tick frees.
    const releasing = new Set<Promise<void>>();
    const released = (job: Job | undefined) => {
      const next = this.takeHandedOff(job);
      const parsed = TurnJobSchema.safeParse(job?.data);
      if (!parsed.success) return void this.enqueueHandedOff(next);
      const release = this.release(fair, parsed.data, next ?? undefined).finally(() => releasing.delete(release));
      releasing.add(release);
    };
    workers[0].on('completed', (job) => released(job));
    workers[0].on('failed', (job) => {
      if (job?.finishedOn) released(job);
      // done, yet not completed (its lock lost on the way): its hand-off is made now
      else void this.enqueueHandedOff(this.takeHandedOff(job));
    });
    const name = options.name ?? `consumer-${randomBytes(4).toString('hex')}`;
    let ticking: Promise<void> | null = null;
    const tick = () => {
      if (ticking || this.closed) return;
      ticking = this.tick(fair, name, options.concurrency)
        .catch(onError)
        .finally(() => (ticking = null));
    };
    const timer = setInterval(tick, this.options.fairness?.tickMs ?? FAIR_TICK_MS);
    timer.unref();
    tick(); // at once: held executions (a producer ran before any consumer) start now
    this.consumer = {
      connection: fair.connection,
      runtimes,
      turns: fair.turns,
      workers,
      name,
      stopTicking: async () => {
        clearInterval(timer);
        await ticking; // a tick in flight would register this consumer again after its leaving
      },
      releasing,
    };
  }

  private takeHandedOff(job: Job | undefined): { job: TurnJob; enqueuedAt: number } | null {
    const next = job?.id ? this.handedOff.get(job.id) : undefined;
    if (job?.id) this.handedOff.delete(job.id);
    return next ?? null;
  }

  /**
   * One run of a turn job (`runTurn`) in its `TurnRun`: an enqueue of its session's next execution
   * made meanwhile (the hand-off) is kept, and made by the job's release once it has completed (one
   * script call frees its place and admits the next); a run that ends otherwise (later, waiting for
   * children, failed) makes it at once. A process dying in between loses it: the job, found stalled,
   * runs again and hands off again (or the sweeper enqueues the execution).
   */
  private async processTurn(handlers: QueueHandlers, runtimes: Queue, job: Job, token: string | undefined): Promise<void> {
    const parsed = TurnJobSchema.safeParse(job.data);
    const run: TurnRun = { tenantId: parsed.data?.tenantId ?? '', sessionId: parsed.data?.sessionId ?? '', open: true, next: null };
    let done = false;
    try {
      await this.turnRuns.run(run, () => this.runTurn(handlers, runtimes, job, token));
      done = true;
    } finally {
      run.open = false;
      if (done && run.next && job.id) this.handedOff.set(job.id, run.next);
      else await this.enqueueHandedOff(run.next);
    }
  }

  /**
   * One run of a turn job: asks the handler for the next step. Children are added as this job's
   * dependencies and the job moves to waiting-children; it is processed again (its data re-read,
   * the claimed attempt with it) when every child has ended. When they all ended already, BullMQ
   * answers that there is nothing to wait for and the handler is asked again at once.
   */
  private async runTurn(handlers: QueueHandlers, runtimes: Queue, job: Job, token: string | undefined): Promise<void> {
    this.started(job);
    let data: TurnJobData = parseData(TurnJobDataSchema, job);
    const maxAttempts = job.opts.attempts ?? this.retry.turnAttempts;
    const ctx: TurnJobContext = {
      attemptsMade: job.attemptsMade,
      maxAttempts,
      get claimedAttempt() {
        return data.claimedAttempt ?? null;
      },
      // the job's enqueue time (ms, `turnJobOptions`): the same for every run of this job (a retry, a
      // stalled job's re-run, its run after its children), another for a job of the same id enqueued
      // anew (the sweeper's after a loss, seconds later at least); the claim records it, so it is not
      // written to the job (issue 33: a script call a turn). A job without one (none of ours) names
      // no claimant: its re-run claims a new attempt, which fences the old run out all the same.
      ...(Number.isSafeInteger(job.timestamp) && job.timestamp > 0 ? { claimant: String(job.timestamp) } : {}),
      recordClaim: async (attempt) => {
        data = { ...data, claimedAttempt: attempt };
      },
      startChildren: async (children) => {
        await this.addChildren(runtimes, job, children);
      },
    };
    for (;;) {
      let step;
      try {
        step = await handlers.turn(turnJobOf(data), ctx);
      } catch (error) {
        throw forBullMq(error);
      }
      if (step.kind === 'done') return;
      if (step.kind === 'later') {
        await job.moveToDelayed(Date.now() + step.delayMs, token);
        throw new (bullmq().DelayedError)();
      }
      await this.addChildren(runtimes, job, step.children);
      if (await job.moveToWaitingChildren(token ?? '')) throw new (bullmq().WaitingChildrenError)();
    }
  }

  /** Adds runtime jobs as the turn job's children (its dependencies; a job id that exists adds nothing). */
  private async addChildren(runtimes: Queue, parent: Job, children: readonly RuntimeJob[]): Promise<void> {
    await runtimes.addBulk(children.map((child) => ({ name: 'runtime', data: child, opts: this.childOptions(parent, child) })));
  }

  private childOptions(parent: Job, child: RuntimeJob): JobsOptions {
    return {
      jobId: runtimeJobId(child),
      parent: { id: parent.id!, queue: parent.queueQualifiedName },
      attempts: this.retry.runtimeAttempts,
      backoff: { type: 'exponential', delay: this.retry.backoffMs },
      // a child that fails for good still releases its parent, which reads the outcome from the log
      ignoreDependencyOnFailure: true,
      // removed when done: a turn job that finds the output still missing adds the child anew
      removeOnComplete: true,
      removeOnFail: true,
    };
  }

  private async processRuntime(handlers: QueueHandlers, job: Job, token: string | undefined): Promise<void> {
    this.started(job);
    const data = parseData(RuntimeJobSchema, job);
    let outcome;
    try {
      outcome = await handlers.runtime(data, { attemptsMade: job.attemptsMade, maxAttempts: job.opts.attempts ?? this.retry.runtimeAttempts });
    } catch (error) {
      throw forBullMq(error);
    }
    if (outcome.kind === 'later') {
      await job.moveToDelayed(Date.now() + outcome.delayMs, token);
      throw new (bullmq().DelayedError)();
    }
  }

  private async processWorld(handler: NonNullable<QueueHandlers['world']>, job: Job, token: string | undefined): Promise<void> {
    this.started(job);
    const data = parseData(WorldGenerationJobSchema, job);
    let outcome;
    try {
      outcome = await handler(data, { attemptsMade: job.attemptsMade, maxAttempts: job.opts.attempts ?? this.retry.worldAttempts });
    } catch (error) {
      throw forBullMq(error);
    }
    if (outcome.kind === 'later') {
      await job.moveToDelayed(Date.now() + outcome.delayMs, token);
      throw new (bullmq().DelayedError)();
    }
  }

  /** The first start of a job (BullMQ counts every move to active): how long it waited since it was added. */
  private started(job: Job) {
    if (job.attemptsStarted <= 1) this.options.onJobStarted?.({ queue: job.queueName, waitedMs: Date.now() - job.timestamp });
  }

  /**
   * Stops taking jobs (Worker.close), waits for the running ones within `options` (`drainWithin`):
   * a job that ends `later` meanwhile is moved to delayed, so any worker takes it (no attempt
   * spent). One still running past the hand-back time keeps its lock until it expires, then the
   * stalled-job check of another worker (or of this one's next start) moves it back to wait.
   */
  async close(options: QueueCloseOptions = {}): Promise<void> {
    this.closed = true;
    if (this.consumer) {
      const { workers, runtimes, turns, connection, name, stopTicking, releasing } = this.consumer;
      this.consumer = null; // closed once: a second close does not wait for a job left running
      await stopTicking();
      // Worker.close stops fetching at once, then waits for the jobs running here to end (their locks renewed meanwhile)
      const closing = Promise.all(workers.map((w) => w.close()));
      const release = async () => {
        // the places of the jobs that ended here freed, then its concurrency no longer counts in the
        // auto window (bounded: a Redis away does not hold the close)
        await bounded(Promise.all(releasing), PING_TIMEOUT_MS, () => queueUnavailable('no answer')).catch(() => undefined);
        await bounded(connection.covelFairLeave(...this.fairArgs(), name, this.registrationMs()), PING_TIMEOUT_MS, () => queueUnavailable('no answer')).catch(
          () => undefined,
        );
        await runtimes.close();
        await turns.close();
        connection.disconnect();
      };
      if (await drainWithin(closing, options)) await release();
      else {
        this.options.logger?.warn('queue: stopping with jobs still running; another worker takes them once their locks expire');
        // not under a job still running: BullMQ's worker loop spins on a connection closed under it
        void closing.then(release, release);
      }
    }
    await this.runtimesView?.close();
    await this.worldsView?.close();
    await this.queue.close();
    this.connection.disconnect();
  }
}
