import { Inject, Injectable, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { Engine, InProcessQueue } from '../../libs/engine';
import { ENGINE } from '../api/tokens';

/** Starts the sweeper, and the in-process consumer when there is no Redis. */
@Injectable()
export class WorkerLifecycle implements OnApplicationBootstrap, OnApplicationShutdown {
  constructor(@Inject(ENGINE) private readonly engine: Engine) {}

  onApplicationBootstrap() {
    const executor = this.engine.executor;
    if (!executor) throw new Error('worker needs an engine created with role worker or all');
    if (this.engine.queue instanceof InProcessQueue) this.engine.queue.consume((job, attempt) => executor.handle(job, attempt));
    this.engine.sweeper?.start();
  }

  async onApplicationShutdown() {
    await this.engine.sweeper?.stop();
  }
}
