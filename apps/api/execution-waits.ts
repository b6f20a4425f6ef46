import { Inject, Injectable, type OnModuleDestroy } from '@nestjs/common';
import type { Engine } from '../../libs/engine';
import { type ExecutionView, type ExecutionWait, ExecutionWaiter, type ListenState } from '../../libs/events';
import { ENGINE } from './tokens';

/**
 * The API process's one ExecutionWaiter (one LISTEN connection, opened at the first wait or
 * submission). Closed with the module, before the HTTP server: every pending long-poll is answered
 * with its current state.
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

  get listenState(): ListenState {
    return this.waiter.listenState;
  }

  /** Long-polls not answered yet. */
  get pending(): number {
    return this.waiter.pending;
  }

  wait(request: ExecutionWait): Promise<ExecutionView | null> {
    return this.waiter.wait(request);
  }

  /**
   * Runs `submit` (an append that creates an execution) after this process LISTENs: a long-poll here
   * for the execution it created then waits for the end's notification without reading it first
   * (issue 33: one statement per turn), until anything makes that unprovable (see `ExecutionWaiter.submittedAfter`).
   * A repeat (`replayed`: the execution was created before) is not taken as created here.
   */
  async submitting<T extends { answer: { executionId: string }; replayed: boolean }>(tenantId: string, submit: () => Promise<T>): Promise<T> {
    const mark = await this.waiter.beforeSubmit();
    const result = await submit();
    if (!result.replayed) this.waiter.submittedAfter(mark, tenantId, result.answer.executionId);
    return result;
  }

  onModuleDestroy(): Promise<void> {
    return this.waiter.close();
  }
}
