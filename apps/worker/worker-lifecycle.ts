import { Inject, Injectable, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { Engine, InProcessQueue } from '../../libs/engine';
import { ENGINE } from '../api/tokens';

/**
 * Starts taking turn and runtime jobs (either queue driver: the driver runs the jobs, the engine
 * closes it, which drains them), the sweeper, and the projector of the async projections
 * (trace_events, prefix_reports). The in-process queue holds its jobs in memory, so at start-up
 * (before the API serves) every session's earliest pending execution is enqueued at once: a turn
 * cut by a crash resumes now, not when the sweeper finds it idle.
 */
@Injectable()
export class WorkerLifecycle implements OnApplicationBootstrap, OnApplicationShutdown {
  constructor(@Inject(ENGINE) private readonly engine: Engine) {}

  async onApplicationBootstrap() {
    const turns = this.engine.turns;
    if (!turns) throw new Error('worker needs an engine created with role worker or all');
    this.engine.queue.consume(turns);
    if (this.engine.queue instanceof InProcessQueue) {
      const resumed = await this.engine.sweeper!.resumeAll().catch((error: unknown) => {
        this.engine.logger.warn(`resuming pending executions at start-up failed (the sweeper retries): ${String(error)}`);
        return 0;
      });
      if (resumed > 0) this.engine.logger.log(`resumed ${resumed} pending execution${resumed === 1 ? '' : 's'}`);
    }
    this.engine.sweeper?.start();
    this.engine.projector.start();
  }

  async onApplicationShutdown() {
    await this.engine.sweeper?.stop();
    await this.engine.projector.stop();
  }
}
