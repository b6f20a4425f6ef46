import { Processor, WorkerHost } from '@nestjs/bullmq';
import { Inject } from '@nestjs/common';
import { DelayedError, Job, UnrecoverableError } from 'bullmq';
import { Engine, isPermanentFailure, TURN_JOB_ATTEMPTS, TURN_QUEUE_NAME, TurnJob } from '../../libs/engine';
import { ENGINE } from '../api/tokens';
import { workerOptionsFromEnv } from './worker-options';

/**
 * BullMQ processor of turn jobs; a job that must wait for an earlier input goes back delayed, and a
 * failure retrying cannot fix (invalid, not found) is BullMQ's UnrecoverableError: no retry.
 */
@Processor(TURN_QUEUE_NAME, workerOptionsFromEnv())
export class TurnProcessor extends WorkerHost {
  constructor(@Inject(ENGINE) private readonly engine: Engine) {
    super();
  }

  async process(job: Job<TurnJob>, token?: string): Promise<void> {
    let outcome;
    try {
      outcome = await this.engine.executor!.handle(job.data, {
        attemptsMade: job.attemptsMade,
        maxAttempts: job.opts.attempts ?? TURN_JOB_ATTEMPTS,
      });
    } catch (error) {
      if (isPermanentFailure(error)) throw new UnrecoverableError(`${error.code}: ${error.message}`);
      throw error;
    }
    if (outcome.kind === 'later') {
      await job.moveToDelayed(Date.now() + outcome.delayMs, token);
      throw new DelayedError();
    }
  }
}
