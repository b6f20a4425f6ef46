import { Queue } from 'bullmq';
import IORedis from 'ioredis';
import { UnavailableError } from '../errors';
import { type QueueHealth, queueUnavailable, TURN_JOB_ATTEMPTS, TURN_QUEUE_NAME, type TurnJob, type TurnQueue, turnJobId } from './queue';
import type { Logger } from './logger';

/** Bound of one enqueue (and of the health probe's PING): under the API's 2 s answer bound. */
export const ENQUEUE_TIMEOUT_MS = 1_500;
const PING_TIMEOUT_MS = 1_000;

export interface BullMqOptions {
  redisUrl: string;
  /** Key prefix, so several deployments (or test runs) can share one Redis. */
  prefix?: string;
  /** How long an enqueue may wait for Redis before it fails as unavailable. */
  enqueueTimeoutMs?: number;
  /** Told once when the connection is lost and once when it is back. */
  logger?: Pick<Logger, 'log' | 'warn'>;
}

/** The connection of BullMQ workers: blocking commands, so it retries forever (BullMQ requires it). */
export function redisConnection(redisUrl: string): IORedis {
  return new IORedis(redisUrl, { maxRetriesPerRequest: null });
}

/**
 * The producer's connection: fails fast instead of queueing commands while Redis is away
 * (the producer is asked from an HTTP request, which must answer in bounded time).
 */
function producerConnection(redisUrl: string): IORedis {
  return new IORedis(redisUrl, { maxRetriesPerRequest: 1, enableOfflineQueue: false });
}

function bounded<T>(work: Promise<T>, ms: number, onTimeout: () => Error): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(onTimeout()), ms);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

/** Producer side of the turn queue on BullMQ (workers consume through @nestjs/bullmq). */
export class BullMqTurnQueue implements TurnQueue {
  private readonly connection: IORedis;
  private readonly queue: Queue;
  /** starting: first connect in progress (an enqueue waits for it, bounded); down: lost or refused. */
  private state: 'starting' | 'up' | 'down' = 'starting';
  private closed = false;

  constructor(private readonly options: BullMqOptions) {
    this.connection = producerConnection(options.redisUrl);
    this.queue = new Queue(TURN_QUEUE_NAME, { connection: this.connection, prefix: options.prefix ?? 'covel' });
    this.connection.on('ready', () => {
      if (this.state === 'down') this.options.logger?.log('queue: redis connection is back');
      this.state = 'up';
    });
    const lost = () => {
      if (this.connection.status === 'ready') return;
      if (this.state === 'up' && !this.closed) this.options.logger?.warn('queue: redis connection lost; enqueues fail at once until it is back');
      this.state = 'down';
    };
    this.connection.on('close', lost);
    this.connection.on('error', lost);
  }

  /** False once the connection is known lost (or refused); true while up or still making its first connection. */
  isAvailable(): boolean {
    return !this.closed && this.state !== 'down';
  }

  async health(): Promise<QueueHealth> {
    const state = this.connection.status;
    if (this.closed || state !== 'ready') return { kind: 'bullmq', ok: false, state };
    try {
      await bounded(this.connection.ping(), PING_TIMEOUT_MS, () => queueUnavailable('no answer to PING'));
      return { kind: 'bullmq', ok: true, state };
    } catch {
      return { kind: 'bullmq', ok: false, state: 'no answer' };
    }
  }

  async enqueue(job: TurnJob): Promise<void> {
    // known down: fail at once; still starting: the add below waits for the first connection, bounded
    if (!this.isAvailable()) throw queueUnavailable(`the turn queue is unavailable (redis ${this.connection.status})`);
    const timeoutMs = this.options.enqueueTimeoutMs ?? ENQUEUE_TIMEOUT_MS;
    const added = this.queue.add('turn', job, {
      jobId: turnJobId(job.executionId),
      attempts: TURN_JOB_ATTEMPTS,
      backoff: { type: 'exponential', delay: 1000 },
      // removed when done, so the sweeper can enqueue an execution again if it is ever found pending
      removeOnComplete: true,
      removeOnFail: true,
    });
    // an add that loses the race may still land later: harmless, the job id makes it idempotent
    added.catch(() => undefined);
    try {
      await bounded(added, timeoutMs, () => queueUnavailable(`the turn queue did not take the job within ${timeoutMs} ms`));
    } catch (error) {
      if (error instanceof UnavailableError) throw error;
      throw queueUnavailable(`the turn queue failed: ${error instanceof Error ? error.message : String(error)}`, error);
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.queue.close();
    this.connection.disconnect();
  }
}
