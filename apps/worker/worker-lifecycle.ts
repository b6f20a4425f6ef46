import { Inject, Injectable, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { Engine, InProcessQueue } from '../../libs/engine';
import { ENGINE } from '../api/tokens';

/**
 * Starts taking turn, runtime and world generation jobs (either queue driver: the driver runs the
 * jobs, the engine closes it, which drains them), the sweeper, and the projector of the async
 * projections (trace_events, prefix_reports). The in-process queue holds its jobs in memory, so at
 * start-up (before the API serves) every session's earliest pending execution and every world
 * generation job not ended is enqueued at once: work cut by a crash resumes now, not when the
 * sweeper finds it idle.
 */
@Injectable()
export class WorkerLifecycle implements OnApplicationBootstrap, OnApplicationShutdown {
  constructor(@Inject(ENGINE) private readonly engine: Engine) {}

  async onApplicationBootstrap() {
    const turns = this.engine.turns;
    if (!turns) throw new Error('worker needs an engine created with role worker or all');
    const worlds = this.engine.worldGenerationRunner;
    this.engine.queue.consume({
      turn: (job, ctx) => turns.turn(job, ctx),
      runtime: (job, attempt) => turns.runtime(job, attempt),
      ...(worlds ? { world: worlds.run } : {}),
    });
    if (this.engine.queue instanceof InProcessQueue) {
      const resumed = await this.engine.sweeper!.resumeAll().catch((error: unknown) => {
        this.engine.logger.warn(`resuming pending executions at start-up failed (the sweeper retries): ${String(error)}`);
        return 0;
      });
      if (resumed > 0) this.engine.logger.log(`resumed ${resumed} pending execution${resumed === 1 ? '' : 's'}`);
      const generations = await this.engine.sweeper!.resumeWorldGenerations().catch((error: unknown) => {
        this.engine.logger.warn(`resuming world generation jobs at start-up failed (the sweeper retries): ${String(error)}`);
        return 0;
      });
      if (generations > 0) this.engine.logger.log(`resumed ${generations} world generation job${generations === 1 ? '' : 's'}`);
    }
    this.engine.sweeper?.start();
    this.engine.projector.start();
  }

  async onApplicationShutdown() {
    await this.engine.sweeper?.stop();
    await this.engine.projector.stop();
  }
}
