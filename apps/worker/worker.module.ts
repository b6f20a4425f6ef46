import { BullModule } from '@nestjs/bullmq';
import { DynamicModule, Module } from '@nestjs/common';
import { Engine, redisConnection, TURN_QUEUE_NAME } from '../../libs/engine';
import { ENGINE } from '../api/tokens';
import { TurnProcessor } from './turn.processor';
import { WorkerLifecycle } from './worker-lifecycle';

@Module({})
export class WorkerModule {
  static forEngine(engine: Engine): DynamicModule {
    const engineProvider = { provide: ENGINE, useValue: engine };
    if (!engine.config.redisUrl) {
      return { module: WorkerModule, providers: [engineProvider, WorkerLifecycle] };
    }
    return {
      module: WorkerModule,
      imports: [
        BullModule.forRoot({ connection: redisConnection(engine.config.redisUrl), prefix: engine.config.queuePrefix }),
        BullModule.registerQueue({ name: TURN_QUEUE_NAME }),
      ],
      providers: [engineProvider, WorkerLifecycle, TurnProcessor],
    };
  }
}
