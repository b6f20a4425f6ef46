import { UnavailableError } from '../errors';

/** The turn queue port: the API enqueues, workers consume. Drivers: in-process and BullMQ. */
export interface TurnJob {
  executionId: string;
  sessionId: string;
  tenantId: string;
}

export type JobOutcome = { kind: 'done' } | { kind: 'later'; delayMs: number };

export interface JobAttempt {
  /** Attempts that already failed before this one. */
  attemptsMade: number;
  maxAttempts: number;
}

export type TurnJobHandler = (job: TurnJob, attempt: JobAttempt) => Promise<JobOutcome>;

export interface QueueHealth {
  kind: 'bullmq' | 'in-process';
  ok: boolean;
  /** The driver's connection state (for BullMQ the ioredis status: ready, reconnecting, ...). */
  state: string;
}

export interface TurnQueue {
  /**
   * Idempotent per execution: enqueueing a job that is still waiting or running is a no-op.
   * Bounded: rejects with `UnavailableError` (dependency `queue`) when the queue is down or does
   * not take the job in time, never waits for a reconnect.
   */
  enqueue(job: TurnJob): Promise<void>;
  /** Synchronous and cheap: false when the queue is known to be down (an enqueue would fail now). */
  isAvailable(): boolean;
  /** A bounded probe for `/health`; never throws. */
  health(): Promise<QueueHealth>;
  close(): Promise<void>;
}

/** What a caller is told to wait when the queue cannot be reached. */
export const QUEUE_RETRY_AFTER_SECONDS = 2;

export const queueUnavailable = (message: string, cause?: unknown) => new UnavailableError('queue', message, QUEUE_RETRY_AFTER_SECONDS, { cause });

export const TURN_QUEUE_NAME = 'covel-turns';
export const TURN_JOB_ATTEMPTS = 5;

/** The job id is derived from the execution id, so a retried enqueue adds nothing. */
export const turnJobId = (executionId: string) => `turn-${executionId}`;
