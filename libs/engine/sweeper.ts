import type { ReadModels } from '../events';
import type { TurnQueue } from './queue';
import type { Logger } from './logger';

export interface SweeperOptions {
  /** How often a pass runs. */
  intervalMs: number;
  /** An execution with no progress for this long is enqueued again. */
  stalledAfterMs: number;
}

/**
 * Recovery loop: enqueues executions that have made no progress for
 * a while (an enqueue that failed after its append, a job lost with its Redis). Enqueue is
 * idempotent by job id, so a job that still exists (waiting, delayed, running) is left as it is:
 * that is what makes a short `stalledAfterMs` safe; it only costs a no-op enqueue per slow turn.
 */
export class Sweeper {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<unknown> | null = null;
  private failing = false;

  constructor(
    private readonly readModels: ReadModels,
    private readonly queue: TurnQueue,
    private readonly logger: Logger,
    private readonly options: SweeperOptions,
  ) {}

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => {
      if (!this.running) this.running = this.sweep().finally(() => (this.running = null));
    }, this.options.intervalMs);
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
      const enqueued = this.queue.isAvailable() ? await this.enqueuePending(this.options.stalledAfterMs) : 0;
      if (this.failing) this.logger.log('sweep: working again');
      this.failing = false;
      return enqueued;
    } catch (error) {
      // one line when sweeping starts to fail (an outage), not one per pass
      if (!this.failing) this.logger.warn(`sweep failed (next passes retry, quietly until one succeeds): ${String(error)}`);
      this.failing = true;
      return 0;
    }
  }

  /**
   * Enqueues every pending execution, however recent. Only for a driver whose jobs all live in
   * this process (the embedded default at start-up): nothing else can be running them.
   */
  async resumeAll(): Promise<number> {
    return this.enqueuePending(undefined);
  }

  private async enqueuePending(idleForMs: number | undefined): Promise<number> {
    let count = 0;
    let afterExecutionId: string | undefined;
    for (;;) {
      const page = await this.readModels.pendingExecutions({ idleForMs, afterExecutionId });
      for (const e of page) await this.queue.enqueue(e);
      count += page.length;
      if (page.length === 0) return count;
      afterExecutionId = page[page.length - 1].executionId;
    }
  }
}
