import type { ReadModels, WorldGenerationReads } from '../../events';
import type { TurnProducer } from '../queue';
import type { Logger } from '../logging/logger';
import { enqueueInOwnTrace } from '../execution/trace-spans';

export interface SweeperOptions {
  /** How often a pass runs. */
  intervalMs: number;
  /** A session whose earliest pending execution has made no progress for this long is enqueued again. */
  stalledAfterMs: number;
}

export interface SweeperDeps {
  readModels: ReadModels;
  /** World generation jobs not ended yet: enqueued again like stalled executions (absent: not swept). */
  worldGenerations?: Pick<WorldGenerationReads, 'pending'>;
  queue: TurnProducer;
  logger: Logger;
  options: SweeperOptions;
}

/**
 * Recovery loop for what the hand-off cannot do: an enqueue that failed after its append, a
 * hand-off lost with the process that ended an execution, a job lost with its Redis. Only each
 * session's earliest pending execution is enqueued (the later ones follow by hand-off), and only
 * once it has been idle for `stalledAfterMs`. Enqueue is idempotent by job id, so a job that still
 * exists (waiting, delayed, running, waiting for its runtime jobs) is left as it is: that is what
 * makes a short `stalledAfterMs` safe; it only costs a no-op enqueue per slow turn. World generation
 * jobs not ended yet are enqueued again the same way, once idle as long.
 */
export class Sweeper {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<unknown> | null = null;
  private failing = false;

  constructor(private readonly deps: SweeperDeps) {}

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => {
      if (!this.running) this.running = this.sweep().finally(() => (this.running = null));
    }, this.deps.options.intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running;
  }

  /** One pass; returns how many executions were enqueued (again). */
  async sweep(): Promise<number> {
    try {
      // with the queue away there is nothing to hand stalled executions to: the next pass will
      const idle = this.deps.options.stalledAfterMs;
      const enqueued = this.deps.queue.isAvailable() ? (await this.enqueueHeads(idle)) + (await this.enqueueWorldGenerations(idle)) : 0;
      if (this.failing) this.deps.logger.log('sweep: working again');
      this.failing = false;
      return enqueued;
    } catch (error) {
      // one line when sweeping starts to fail (an outage), not one per pass
      if (!this.failing) this.deps.logger.warn(`sweep failed (next passes retry, quietly until one succeeds): ${String(error)}`);
      this.failing = true;
      return 0;
    }
  }

  /**
   * Enqueues every session's earliest pending execution, however recent. Only for a driver whose
   * jobs all live in this process (the embedded default at start-up): nothing else can be running them.
   */
  async resumeAll(): Promise<number> {
    return this.enqueueHeads(undefined);
  }

  /** Enqueues every world generation job not ended yet, however recent (like `resumeAll`, for the same driver only). */
  async resumeWorldGenerations(): Promise<number> {
    return this.enqueueWorldGenerations(undefined);
  }

  /** Enqueues every world generation job not ended yet (idle for `idleForMs`, when given); how many. */
  private async enqueueWorldGenerations(idleForMs: number | undefined): Promise<number> {
    const reads = this.deps.worldGenerations;
    if (!reads) return 0;
    let count = 0;
    let afterJobId: string | undefined;
    for (;;) {
      const page = await reads.pending({ idleForMs, afterJobId });
      for (const job of page) await this.deps.queue.enqueueWorldGeneration(job);
      count += page.length;
      if (page.length === 0) return count;
      afterJobId = page[page.length - 1].jobId;
    }
  }

  private async enqueueHeads(idleForMs: number | undefined): Promise<number> {
    let count = 0;
    let afterSessionId: string | undefined;
    for (;;) {
      const page = await this.deps.readModels.pendingSessionHeads({ idleForMs, afterSessionId });
      for (const e of page) await enqueueInOwnTrace(this.deps.queue, e, 'sweeper');
      count += page.length;
      if (page.length === 0) return count;
      afterSessionId = page[page.length - 1].sessionId;
    }
  }
}
