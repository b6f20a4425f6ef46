import { EventStore, LOG_PARTITIONS } from '../../event-store';
import type { Projection } from '../projection';
import type { ApplyContext } from './apply-batch';
import { planClaims } from './claim-plan';
import { DEFAULT_QUARANTINE_AFTER, QuarantineRecords } from './quarantine';
import { replayProjection } from './replay';
import { claimShards, ensureShards, readShards, releaseShards, type ShardRow } from './shard-rows';
import { readStatus } from './status';
import type { AppendWakes, AsyncProjectionStatus, AsyncProjectorOptions, ReplayOptions, ReplayResult, WaitForRequest, WaitResult } from './types';
import { waitForPosition } from './wait-for';
import { workShards } from './work-shards';

/** Default of `AsyncProjectorOptions.idleDelayMs` (`COVEL_PROJECTION_IDLE_DELAY_MS`). */
export const DEFAULT_PROJECTION_IDLE_DELAY_MS = 200;

/** What a pass did, for the loop's pause after it. */
interface Pass {
  applied: number;
  moved: number;
  /** Nothing given back, taken from another owner or wanted but not free, no held event waiting: nothing to look at again soon. */
  settled: boolean;
  /** The soonest retry of a held shard backing off (null: none). */
  retryInMs: number | null;
}

/** An unknown projection name given to waitFor or replay (a programming or usage error). */
export class UnknownProjectionError extends Error {
  readonly code = 'UNKNOWN_PROJECTION';
  constructor(name: string, known: readonly string[]) {
    super(`unknown async projection ${JSON.stringify(name)} (known: ${known.join(', ')})`);
  }
}

/**
 * Runs async projections off the turn's path. Each projection has a cursor per log partition
 * (`projection_shards`); a process works the partitions it holds (try-lock + lease, a fair share
 * of the live owners), reads each shard's batch once for every projection at that cursor, and writes
 * the projections' rows of all those batches with their new cursors in one transaction, the cursors
 * by compare-and-set, so several processes share the work and none applies an event twice. A
 * projection that cannot apply an event stops alone on that shard (the shared transaction is rolled
 * back, each shard then each projection applied alone) (recorded on its row, logged once, retried with backoff); every other shard and
 * projection goes on. After `quarantineAfter` failed attempts the event is quarantined (recorded in
 * `projection_quarantine`, logged) and the shard goes on after it. Callers that need a view current `waitFor` it instead of doing the work.
 */
export class AsyncProjector {
  private readonly store: EventStore;
  private readonly projections: readonly Projection[];
  private readonly apply: ApplyContext;
  private readonly idleDelayMs: number;
  private readonly appends: AppendWakes | null;
  private readonly safetyNetMs: number;
  private readonly batchSize: number;
  private readonly batchesPerShard: number;
  /** The events the projections skipped: every tenant's for the operator, one session's for its views. */
  readonly quarantine: QuarantineRecords;
  /** Passes (and replays) of this instance run one at a time. */
  private queue: Promise<unknown> = Promise.resolve();
  private ensured = false;
  /** The first pass of a process retries failing shards at once (it may run fixed code). */
  private retriedAtStart = false;
  private loop: Promise<void> | null = null;
  private stopping = false;
  private wake: (() => void) | null = null;
  /** An append was notified since the current pass started (its events may be missed by it). */
  private notified = false;
  /** The loop sleeps waiting for work (a notification ends the sleep; during the gathering pause it does not). */
  private awaitingWork = false;
  private loopFailing = false;
  /** Whether a pass of this instance has taken shards (stop() gives them back). */
  private claimed = false;

  constructor(options: AsyncProjectorOptions) {
    this.store = new EventStore(options.db);
    this.projections = options.projections;
    this.apply = {
      db: options.db,
      owner: options.owner,
      leaseMs: options.leaseMs ?? 20_000,
      retryDelayMs: options.retryDelayMs ?? 1_000,
      maxRetryDelayMs: options.maxRetryDelayMs ?? 5 * 60_000,
      quarantineAfter: Math.max(1, options.quarantineAfter ?? DEFAULT_QUARANTINE_AFTER),
      logger: options.logger ?? console,
    };
    this.idleDelayMs = options.idleDelayMs ?? DEFAULT_PROJECTION_IDLE_DELAY_MS;
    this.appends = options.appends ?? null;
    this.safetyNetMs = Math.max(1, Math.min(options.safetyNetMs ?? 5_000, this.apply.leaseMs / 4));
    this.batchSize = options.batchSize ?? 500;
    this.batchesPerShard = options.batchesPerShard ?? 10;
    this.quarantine = new QuarantineRecords(options.db);
  }

  get names(): string[] {
    return this.projections.map((p) => p.name);
  }

  get owner(): string {
    return this.apply.owner;
  }

  /**
   * Runs passes in the background until stop() (which also gives back what runOnce/drain took): at
   * once while there is a backlog; otherwise, with `appends`, `idleDelayMs` after a notification
   * (one pass per burst) or after `safetyNetMs` without one, and without `appends` every `idleDelayMs`.
   */
  start(): void {
    if (this.loop) return;
    this.stopping = false;
    this.loop = this.run();
  }

  /** Waits for the running pass, then gives the shards back (another process takes them at once). */
  async stop(): Promise<void> {
    this.stopping = true;
    this.wake?.();
    await this.loop;
    this.loop = null;
    if (!this.claimed) return;
    this.claimed = false;
    await this.serial(() => releaseShards(this.apply.db, { owner: this.apply.owner, names: this.names })).catch((error: unknown) =>
      this.apply.logger.warn(`projector ${this.apply.owner}: giving its shards back failed (their leases run out): ${String(error)}`),
    );
  }

  /**
   * One pass over the shards this projector holds or can take; returns the events applied. With
   * `retryNow`, failing shards are retried whatever their backoff. Throws only when the database
   * cannot be reached.
   */
  runOnce(options: { retryNow?: boolean } = {}): Promise<number> {
    return this.serial(async () => (await this.pass(options)).applied);
  }

  /** Passes until one moves no cursor (offline tools and tests: the shards it can hold are at the head). */
  async drain(options: { retryNow?: boolean } = {}): Promise<number> {
    let applied = 0;
    for (;;) {
      const pass = await this.serial(() => this.pass(options));
      applied += pass.applied;
      if (pass.moved === 0) return applied;
    }
  }

  /** Per projection: every shard's cursor, owner, lag and failure. */
  async status(): Promise<AsyncProjectionStatus[]> {
    await this.ensureShards();
    return readStatus(this.apply.db, this.names);
  }

  /** Resolves when the projection has applied the stream's event (default its last), or says why not (see WaitResult). */
  async waitFor(request: WaitForRequest): Promise<WaitResult> {
    this.projection(request.projection);
    return waitForPosition(this.apply.db, request);
  }

  /** Rebuilds one projection (or all of them) from the log while everything else goes on (see replayProjection). */
  replay(options: ReplayOptions = {}): Promise<ReplayResult> {
    const chosen = options.projection === undefined ? this.projections : [this.projection(options.projection)];
    return this.serial(async () => {
      const projections = [];
      for (const projection of chosen) {
        projections.push(
          await replayProjection({ store: this.store, apply: this.apply, batchSize: this.batchSize, projection, onProgress: options.onProgress }),
        );
      }
      return { projections };
    });
  }

  private projection(name: string): Projection {
    const found = this.projections.find((p) => p.name === name);
    if (!found) throw new UnknownProjectionError(name, this.names);
    return found;
  }

  private serial<T>(work: () => Promise<T>): Promise<T> {
    const next = this.queue.then(work, work);
    this.queue = next.catch(() => undefined);
    return next;
  }

  private async ensureShards() {
    if (this.ensured) return;
    await ensureShards(this.apply.db, this.names);
    this.ensured = true;
  }

  private async pass(options: { retryNow?: boolean }): Promise<Pass> {
    await this.ensureShards();
    const retryAll = options.retryNow === true || !this.retriedAtStart;
    const { db, owner, leaseMs } = this.apply;
    const rows = await readShards(db, this.names);
    const plan = planClaims({ holdings: rows, owner, partitions: LOG_PARTITIONS });
    await releaseShards(db, { owner, names: this.names, shards: plan.release });
    // rows held with more than half their lease left need no write this pass (an idle pass is one read)
    const fresh = (r: ShardRow) => r.owner === owner && r.leaseLeftMs > leaseMs / 2;
    const renew = plan.claim.filter((shard) => rows.some((r) => r.shard === shard && !fresh(r)));
    const kept = rows.filter((r) => plan.claim.includes(r.shard) && !renew.includes(r.shard) && fresh(r));
    this.claimed = true;
    const workOf = new Map(rows.map((r) => [`${r.projection}/${r.shard}`, r.hasWork]));
    const claimed = await claimShards(db, { names: this.names, shards: renew, owner, leaseMs });
    if (plan.steal) claimed.push(...(await claimShards(db, { names: this.names, shards: [plan.steal.shard], owner, leaseMs, from: plan.steal.from })));
    const held = [...kept, ...claimed.map((r) => ({ ...r, hasWork: workOf.get(`${r.projection}/${r.shard}`) ?? true }))];
    const byShard = new Map<number, ShardRow[]>();
    for (const row of held) {
      if (!row.hasWork) continue;
      if (row.failing && !row.retryDue && !retryAll) continue; // backing off
      byShard.set(row.shard, [...(byShard.get(row.shard) ?? []), row]);
    }
    const shards = new Map([...byShard].map(([shard, rows]) => [shard, rows.map((row) => ({ projection: this.projection(row.projection), row }))]));
    const { applied, moved } = await workShards({
      store: this.store,
      apply: this.apply,
      batchSize: this.batchSize,
      maxBatches: this.batchesPerShard,
      shards,
      // a stop (SIGTERM) waits for one round, not for every shard's batches of a backlog
      shouldStop: () => this.stopping && this.loop !== null,
    });
    this.retriedAtStart = true;
    // a partition given back, taken from another owner, or wanted but not free: the shares settle pass by pass
    // or an event committed behind a transaction still running (no notification follows that one's end)
    const settled =
      plan.release.length === 0 &&
      plan.steal === null &&
      new Set(held.map((r) => r.shard)).size >= plan.claim.length &&
      !rows.some((r) => r.hasHeldWork && plan.claim.includes(r.shard));
    const backingOff = held.filter((r) => r.failing && !r.retryDue).map((r) => r.retryLeftMs);
    return { applied, moved, settled, retryInMs: backingOff.length > 0 ? Math.min(...backingOff) : null };
  }

  private async run(): Promise<void> {
    const unsubscribe = await this.subscribe();
    try {
      while (!this.stopping) {
        this.notified = false;
        let pass: Pass = { applied: 0, moved: 0, settled: true, retryInMs: null };
        try {
          pass = await this.serial(() => this.pass({}));
          if (this.loopFailing) this.apply.logger.log(`projector ${this.apply.owner}: working again`);
          this.loopFailing = false;
        } catch (error) {
          // one line when passes start failing (an outage), not one per pass
          if (!this.loopFailing) this.apply.logger.warn(`projector ${this.apply.owner}: a pass failed (retrying quietly until one succeeds): ${String(error)}`);
          this.loopFailing = true;
        }
        // at once again only while there is a backlog (a full batch's worth applied): under a steady
        // trickle, waiting lets events gather so each shard's transaction carries many of them
        const backlog = pass.moved > 0 && pass.applied >= this.batchSize;
        if (!backlog && !this.stopping) await this.idle(pass);
      }
    } finally {
      unsubscribe();
    }
  }

  /** Registers the wake on appends before the first pass: an append committed later is heard, an earlier one is in that pass. */
  private async subscribe(): Promise<() => void> {
    if (!this.appends) return () => undefined;
    try {
      return await this.appends.subscribeAll(() => {
        this.notified = true;
        if (this.awaitingWork) this.wake?.();
      });
    } catch (error) {
      this.apply.logger.warn(`projector ${this.apply.owner}: cannot hear appends (it polls every ${this.idleDelayMs} ms): ${String(error)}`);
      return () => undefined;
    }
  }

  /** The pause after a pass without a backlog (see start()). */
  private async idle(pass: Pass): Promise<void> {
    if (this.loopFailing) return this.sleep(Math.max(this.idleDelayMs, 1_000));
    if (!this.appends || !pass.settled) return this.sleep(this.idleDelayMs);
    if (!this.notified) {
      // a shard backing off is retried when due; a notification ends the wait at once
      const wait = pass.retryInMs === null ? this.safetyNetMs : Math.min(this.safetyNetMs, Math.max(this.idleDelayMs, pass.retryInMs));
      this.awaitingWork = true;
      await this.sleep(wait);
      this.awaitingWork = false;
    }
    // the rest of the burst gathers for the same pass
    if (this.notified && !this.stopping) await this.sleep(this.idleDelayMs);
  }
  private sleep(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.wake = done;
    }).then(() => {
      this.wake = null;
    });
  }
}
