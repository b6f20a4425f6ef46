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
      const stalled = await this.readModels.stalledExecutions(this.options.stalledAfterMs);
      for (const e of stalled) await this.queue.enqueue(e);
      return stalled.length;
    } catch (error) {
      this.logger.warn(`sweep failed (next pass retries): ${String(error)}`);
      return 0;
    }
  }
}
