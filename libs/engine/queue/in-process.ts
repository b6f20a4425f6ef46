import { AsyncLocalStorage } from 'node:async_hooks';
import { isPermanentFailure } from '../errors';
import { withTraceCarrier } from '../../telemetry';
import {
  backoffDelay,
  DEFAULT_RETRY_POLICY,
  drainWithin,
  type JobAttempt,
  type JobStartedListener,
  type QueueDepth,
  type QueueCloseOptions,
  type QueueHandlers,
  type QueueHealth,
  queueUnavailable,
  type RetryPolicy,
  RUNTIME_QUEUE_NAME,
  type RuntimeJob,
  runtimeJobId,
  TURN_QUEUE_NAME,
  type TurnJob,
  type TurnJobContext,
  turnJobId,
  type TurnQueue,
  WORLD_QUEUE_NAME,
  type WorldGenerationJob,
  worldJobId,
  type FairnessOptions,
} from './port';
import { capOf, MemoryAdmission } from './fair';

type Lane = 'turn' | 'runtime' | 'world';
const LANES: readonly Lane[] = ['turn', 'runtime', 'world'];
const QUEUE_OF: Record<Lane, string> = { turn: TURN_QUEUE_NAME, runtime: RUNTIME_QUEUE_NAME, world: WORLD_QUEUE_NAME };

interface TurnEntry {
  lane: 'turn';
  id: string;
  job: TurnJob;
  attemptsMade: number;
  claimedAttempt: number | null;
  enqueuedAt: number;
  started?: boolean;
  /** While waiting for children: the ids of those not ended yet. */
  waitingOn: Set<string> | null;
  /** True while the turn handler runs it. */
  running?: boolean;
  /** An enqueue of its execution while it ran (a resume the run may have missed): made anew at the job's end. */
  again?: { job: TurnJob; cap: number; enqueuedAt: number };
}

interface RuntimeEntry {
  lane: 'runtime';
  id: string;
  job: RuntimeJob;
  attemptsMade: number;
  /** Turn jobs waiting for this one (a re-added child with the same id keeps one job). */
  parents: Set<string>;
  enqueuedAt: number;
  started?: boolean;
}

/** A world generation job: alone (no parent, no children). */
interface WorldEntry {
  lane: 'world';
  id: string;
  job: WorldGenerationJob;
  attemptsMade: number;
  enqueuedAt: number;
  started?: boolean;
}

type Entry = TurnEntry | RuntimeEntry | WorldEntry;

export interface InProcessQueueOptions {
  /** Jobs of each kind (turn steps, runtime calls, world generations) running at once. */
  concurrency?: number;
  retry?: Partial<RetryPolicy>;
  /** Told of every failed attempt; `willRetry` is false for a permanent failure or the last attempt. */
  onError?: (error: unknown, info: { kind: Lane; willRetry: boolean; job: TurnJob | RuntimeJob | WorldGenerationJob }) => void;
  /** Told of each job's first start (metrics). */
  onJobStarted?: JobStartedListener;
  /** Fair scheduling across tenants (see `fair.ts`); the window defaults to `concurrency`. */
  fairness?: FairnessOptions;
}

/**
 * The embedded default's queue: the same port and semantics as the BullMQ driver, jobs live in this
 * process only. Three lanes like BullMQ's three queues (turn steps, runtime calls, world
 * generations), each with its own concurrency; runtime jobs of a turn run in parallel within it,
 * and the turn job runs again once all its children have ended. World generation jobs run only
 * once a consumer with a `world` handler has started.
 */
export class InProcessQueue implements TurnQueue {
  private readonly jobs = new Map<string, Entry>();
  private readonly ready: Record<Lane, string[]> = { turn: [], runtime: [], world: [] };
  private readonly active: Record<Lane, number> = { turn: 0, runtime: 0, world: 0 };
  private readonly timers = new Set<NodeJS.Timeout>();
  /** Ids of jobs waiting for a timer (a retry's backoff, a `later`). */
  private readonly timed = new Set<string>();
  private readonly retry: RetryPolicy;
  private readonly admission: MemoryAdmission;
  private handlers: QueueHandlers | null = null;
  /** The turn job whose handler runs in this async context (its enqueues of its session's executions are hand-offs). */
  private readonly turnRuns = new AsyncLocalStorage<TurnJob>();
  private closed = false;
  /** `close` waiting for the running jobs to end. */
  private idleWaiters: (() => void)[] = [];

  constructor(private readonly options: InProcessQueueOptions = {}) {
    this.retry = { ...DEFAULT_RETRY_POLICY, ...options.retry };
    this.admission = new MemoryAdmission(options.fairness?.window ?? options.concurrency ?? 8);
  }

  /** Admitted now (the job is added) or held on its tenant's ready list until a release admits it. */
  async enqueue(job: TurnJob): Promise<void> {
    if (this.closed) throw queueUnavailable('the in-process queue is closed');
    const traced = withTraceCarrier(job);
    const cap = await capOf(this.options.fairness, job.tenantId);
    if (this.closed) throw queueUnavailable('the in-process queue is closed');
    const existing = this.jobs.get(turnJobId(job.executionId));
    // running: its run may have read the log before what this enqueue is for (a resume): one more
    // run after it. Not for a hand-off (an enqueue by a turn run of the same session): as in fair.ts's enqueue
    const run = this.turnRuns.getStore();
    const handOff = run?.tenantId === job.tenantId && run.sessionId === job.sessionId;
    if (existing?.lane === 'turn' && existing.running && !handOff) existing.again = { job: traced, cap, enqueuedAt: Date.now() };
    if (existing || this.admission.has(job.executionId)) return;
    const enqueuedAt = Date.now();
    if (this.admission.enqueue(traced, cap, enqueuedAt)) this.addTurn(traced, enqueuedAt);
  }

  /** Adds an admitted execution's turn job (its trace context as its enqueue captured it; its wait counted from its enqueue, held time included). */
  private addTurn(job: TurnJob, enqueuedAt: number) {
    const id = turnJobId(job.executionId);
    this.jobs.set(id, { lane: 'turn', id, job, attemptsMade: 0, claimedAttempt: null, waitingOn: null, enqueuedAt });
    this.schedule(id);
  }

  async enqueueWorldGeneration(job: WorldGenerationJob): Promise<void> {
    if (this.closed) throw queueUnavailable('the in-process queue is closed');
    const id = worldJobId(job.jobId);
    if (this.jobs.has(id)) return;
    this.jobs.set(id, { lane: 'world', id, job: withTraceCarrier(job), attemptsMade: 0, enqueuedAt: Date.now() });
    this.schedule(id);
  }

  /** Always available while this process runs it (until closed). */
  isAvailable(): boolean {
    return !this.closed;
  }

  async health(): Promise<QueueHealth> {
    return { kind: 'in-process', ok: !this.closed, state: this.closed ? 'closed' : 'running' };
  }

  async depth(): Promise<QueueDepth[]> {
    const states = () => ({ held: 0, waiting: 0, active: 0, delayed: 0, 'waiting-children': 0 });
    const count: Record<Lane, ReturnType<typeof states>> = { turn: states(), runtime: states(), world: states() };
    const ready: Record<Lane, Set<string>> = { turn: new Set(this.ready.turn), runtime: new Set(this.ready.runtime), world: new Set(this.ready.world) };
    for (const entry of this.jobs.values()) {
      const state =
        entry.lane === 'turn' && entry.waitingOn
          ? 'waiting-children'
          : ready[entry.lane].has(entry.id)
            ? 'waiting'
            : this.timed.has(entry.id)
              ? 'delayed'
              : 'active';
      count[entry.lane][state]++;
    }
    count.turn.held = this.admission.heldCount;
    return LANES.flatMap((lane) => Object.entries(count[lane]).map(([state, jobs]) => ({ queue: QUEUE_OF[lane], state, jobs })));
  }

  consume(handlers: QueueHandlers): void {
    this.handlers = handlers;
    this.pump();
  }

  /**
   * Takes no new job, then waits for the running ones (bounded by `options`: see `drainWithin`).
   * Jobs waiting, delayed or handed back stay in memory and end with the process: the engine's next
   * start resumes their executions from the log (`Sweeper.resumeAll`).
   */
  async close(options: QueueCloseOptions = {}): Promise<void> {
    this.closed = true;
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    await drainWithin(this.idle(), options);
  }

  private running(): number {
    return this.active.turn + this.active.runtime + this.active.world;
  }

  /** Resolves once no job runs. */
  private idle(): Promise<void> {
    if (this.running() === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private schedule(id: string) {
    const entry = this.jobs.get(id);
    if (!entry) return;
    this.ready[entry.lane].push(id);
    this.pump();
  }

  private pump() {
    const concurrency = this.options.concurrency ?? 8;
    for (const lane of LANES) {
      // world jobs wait for a consumer that runs them
      const runs = lane !== 'world' || this.handlers?.world !== undefined;
      while (this.handlers && runs && !this.closed && this.active[lane] < concurrency && this.ready[lane].length > 0) {
        const entry = this.jobs.get(this.ready[lane].shift()!);
        if (entry) void this.run(entry);
      }
    }
  }

  private later(id: string, delayMs: number) {
    // closing: handed back, to the next start (no timer keeps a stopping process alive)
    if (this.closed) return void this.timed.add(id);
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      this.timed.delete(id);
      this.schedule(id);
    }, delayMs);
    this.timers.add(timer);
    this.timed.add(id);
  }

  private async run(entry: Entry) {
    this.active[entry.lane]++;
    if (!entry.started) {
      entry.started = true;
      this.options.onJobStarted?.({ queue: QUEUE_OF[entry.lane], waitedMs: Date.now() - entry.enqueuedAt });
    }
    try {
      if (entry.lane === 'turn') await this.runTurn(entry);
      else if (entry.lane === 'runtime') await this.runRuntime(entry);
      else await this.runWorld(entry);
    } catch (error) {
      entry.attemptsMade++;
      // like BullMQ's UnrecoverableError: a failure retrying cannot fix ends the job at once
      const maxAttempts = this.maxAttempts(entry.lane);
      const willRetry = !isPermanentFailure(error) && entry.attemptsMade < maxAttempts;
      this.options.onError?.(error, { kind: entry.lane, willRetry, job: entry.job });
      if (willRetry) this.later(entry.id, backoffDelay(this.retry, entry.attemptsMade));
      else this.end(entry);
    } finally {
      this.active[entry.lane]--;
      this.pump();
      if (this.running() === 0) for (const resolve of this.idleWaiters.splice(0)) resolve();
    }
  }

  private async runTurn(entry: TurnEntry) {
    const ctx: TurnJobContext = {
      attemptsMade: entry.attemptsMade,
      maxAttempts: this.retry.turnAttempts,
      get claimedAttempt() {
        return entry.claimedAttempt;
      },
      recordClaim: async (attempt) => {
        entry.claimedAttempt = attempt;
      },
      startChildren: async (children) => {
        for (const child of children) this.addChild(entry, child);
        this.pump();
      },
    };
    let step;
    entry.running = true;
    try {
      step = await this.turnRuns.run(entry.job, () => this.handlers!.turn(entry.job, ctx));
    } finally {
      entry.running = false;
    }
    if (step.kind === 'done') return this.end(entry);
    if (step.kind === 'later') return this.later(entry.id, step.delayMs);
    const waitingOn = new Set(step.children.map((child) => this.addChild(entry, child)));
    // like BullMQ's moveToWaitingChildren answering "no pending dependencies": run again now
    if (waitingOn.size === 0) this.schedule(entry.id);
    else entry.waitingOn = waitingOn;
  }

  /** Adds a runtime job as a child of `parent` (the job that exists under its id, if any); its id. */
  private addChild(parent: TurnEntry, child: RuntimeJob): string {
    const id = runtimeJobId(child);
    const existing = this.jobs.get(id);
    if (existing?.lane === 'runtime') existing.parents.add(parent.id);
    else {
      this.jobs.set(id, { lane: 'runtime', id, job: child, attemptsMade: 0, parents: new Set([parent.id]), enqueuedAt: Date.now() });
      this.ready.runtime.push(id);
    }
    return id;
  }

  private async runRuntime(entry: RuntimeEntry) {
    const attempt: JobAttempt = { attemptsMade: entry.attemptsMade, maxAttempts: this.retry.runtimeAttempts };
    const outcome = await this.handlers!.runtime(entry.job, attempt);
    if (outcome.kind === 'later') this.later(entry.id, outcome.delayMs);
    else this.end(entry);
  }

  private async runWorld(entry: WorldEntry) {
    const outcome = await this.handlers!.world!(entry.job, { attemptsMade: entry.attemptsMade, maxAttempts: this.retry.worldAttempts });
    if (outcome.kind === 'later') this.later(entry.id, outcome.delayMs);
    else this.end(entry);
  }

  private maxAttempts(lane: Lane): number {
    return lane === 'turn' ? this.retry.turnAttempts : lane === 'runtime' ? this.retry.runtimeAttempts : this.retry.worldAttempts;
  }

  /** The job is gone (completed, or failed for good); a parent whose children have all ended runs again. */
  private end(entry: Entry) {
    this.jobs.delete(entry.id);
    if (entry.lane === 'turn') {
      // a turn job's end frees its execution's place: what it admits is added (round robin across tenants)
      for (const next of this.admission.release(entry.job)) this.addTurn(next.job, next.enqueuedAt);
      // enqueued while it ran: enqueued anew now, admitted or held as any enqueue
      const again = entry.again;
      if (again && !this.jobs.has(entry.id) && !this.admission.has(again.job.executionId) && this.admission.enqueue(again.job, again.cap, again.enqueuedAt))
        this.addTurn(again.job, again.enqueuedAt);
    }
    if (entry.lane !== 'runtime') return;
    for (const parentId of entry.parents) {
      const parent = this.jobs.get(parentId);
      if (parent?.lane !== 'turn' || !parent.waitingOn) continue;
      parent.waitingOn.delete(entry.id);
      if (parent.waitingOn.size === 0) {
        parent.waitingOn = null;
        this.schedule(parent.id);
      }
    }
  }
}
