import type { ProjectionRunner, ReadModels } from '../events';
import type { TurnQueue } from './queue';
import type { Logger } from './session-service';

/**
 * Recovery loop: catches projections up and enqueues executions that have made no progress for
 * a while (an enqueue that failed after its append, a job lost with its Redis). Enqueue is
 * idempotent, so a job that is still waiting or running is left as it is.
 */
export class Sweeper {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<unknown> | null = null;
  private failing = false;

  constructor(
    private readonly readModels: ReadModels,
    private readonly projections: ProjectionRunner,
    private readonly queue: TurnQueue,
    private readonly logger: Logger,
    private readonly options: { intervalMs: number; stalledAfterMs: number },
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

  /** One pass; returns how many executions were enqueued again. */
  async sweep(): Promise<number> {
    try {
      await this.projections.catchUp();
      // with the queue away there is nothing to hand stalled executions to: the next pass will
      if (!this.queue.isAvailable()) return 0;
      const stalled = await this.readModels.stalledExecutions(this.options.stalledAfterMs);
      for (const e of stalled) await this.queue.enqueue(e);
      if (this.failing) this.logger.log('sweep: working again');
      this.failing = false;
      return stalled.length;
    } catch (error) {
      // one line when sweeping starts to fail (an outage), not one per pass
      if (!this.failing) this.logger.warn(`sweep failed (next passes retry, quietly until one succeeds): ${String(error)}`);
      this.failing = true;
      return 0;
    }
  }
}
