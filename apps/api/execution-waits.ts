import { Inject, Injectable, type OnModuleDestroy } from '@nestjs/common';
import type { Engine } from '../../libs/engine';
import { type ExecutionView, ExecutionWaiter } from '../../libs/events';
import { ENGINE } from './tokens';

/**
 * The API process's one ExecutionWaiter (one LISTEN connection, opened at the first wait). Closed
 * with the module, before the HTTP server: every pending long-poll is answered with its current state.
 */
@Injectable()
export class ExecutionWaits implements OnModuleDestroy {
  private readonly waiter: ExecutionWaiter;

  constructor(@Inject(ENGINE) engine: Engine) {
    this.waiter = new ExecutionWaiter({
      listen: (channel, onNotify, options) => engine.database.listen(channel, onNotify, options),
      read: (tenantId, executionId) => engine.readModels.execution(tenantId, executionId),
      logger: engine.logger,
    });
  }

  wait(request: { tenantId: string; executionId: string; timeoutMs: number; signal?: AbortSignal }): Promise<ExecutionView | null> {
    return this.waiter.wait(request);
  }

  onModuleDestroy(): Promise<void> {
    return this.waiter.close();
  }
}
