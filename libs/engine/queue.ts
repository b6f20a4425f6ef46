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

export interface TurnQueue {
  /** Idempotent per execution: enqueueing a job that is still waiting or running is a no-op. */
  enqueue(job: TurnJob): Promise<void>;
  close(): Promise<void>;
}

export const TURN_QUEUE_NAME = 'covel-turns';
export const TURN_JOB_ATTEMPTS = 5;

/** The job id is derived from the execution id, so a retried enqueue adds nothing. */
export const turnJobId = (executionId: string) => `turn-${executionId}`;
