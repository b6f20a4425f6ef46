import { Queue } from 'bullmq';
import IORedis from 'ioredis';
import { TURN_JOB_ATTEMPTS, TURN_QUEUE_NAME, type TurnJob, type TurnQueue, turnJobId } from './queue';

export interface BullMqOptions {
  redisUrl: string;
  /** Key prefix, so several deployments (or test runs) can share one Redis. */
  prefix?: string;
}

export function redisConnection(redisUrl: string): IORedis {
  return new IORedis(redisUrl, { maxRetriesPerRequest: null });
}

/** Producer side of the turn queue on BullMQ (workers consume through @nestjs/bullmq). */
export class BullMqTurnQueue implements TurnQueue {
  private readonly connection: IORedis;
  private readonly queue: Queue;

  constructor(options: BullMqOptions) {
    this.connection = redisConnection(options.redisUrl);
    this.queue = new Queue(TURN_QUEUE_NAME, { connection: this.connection, prefix: options.prefix ?? 'covel' });
  }

  async enqueue(job: TurnJob): Promise<void> {
    await this.queue.add('turn', job, {
      jobId: turnJobId(job.executionId),
      attempts: TURN_JOB_ATTEMPTS,
      backoff: { type: 'exponential', delay: 1000 },
      // removed when done, so the sweeper can enqueue an execution again if it is ever found pending
      removeOnComplete: true,
      removeOnFail: true,
    });
  }

  async close(): Promise<void> {
    await this.queue.close();
    this.connection.disconnect();
  }
}
