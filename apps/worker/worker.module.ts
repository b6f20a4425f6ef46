import { DynamicModule, Module } from '@nestjs/common';
import type { Engine } from '../../libs/engine';
import { ENGINE } from '../api/tokens';
import { WorkerLifecycle } from './worker-lifecycle';

/**
 * The worker: the engine's queue driver (BullMQ with REDIS_URL, else in-process) runs the turn
 * and runtime jobs through the same port, so both drivers share one code path and one conformance
 * suite; this module starts and stops it with the application.
 */
@Module({})
export class WorkerModule {
  static forEngine(engine: Engine): DynamicModule {
    return { module: WorkerModule, providers: [{ provide: ENGINE, useValue: engine }, WorkerLifecycle] };
  }
}
