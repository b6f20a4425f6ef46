import { isPermanentFailure } from './errors';
import { type JobAttempt, type QueueHealth, queueUnavailable, TURN_JOB_ATTEMPTS, type TurnJob, type TurnJobHandler, type TurnQueue, turnJobId } from './queue';

interface Entry {
  job: TurnJob;
  attemptsMade: number;
}

export interface InProcessQueueOptions {
  concurrency?: number;
  maxAttempts?: number;
  backoffMs?: number;
  /** Told of every failed attempt; `willRetry` is false for a permanent failure or the last attempt. */
  onError?: (error: unknown, info: { willRetry: boolean }) => void;
}

/** The embedded default's queue: same port as BullMQ, jobs live in this process only. */
export class InProcessQueue implements TurnQueue {
  private readonly known = new Map<string, Entry>();
  private readonly ready: string[] = [];
  private readonly timers = new Set<NodeJS.Timeout>();
  private handler: TurnJobHandler | null = null;
  private active = 0;
  private closed = false;

  constructor(private readonly options: InProcessQueueOptions = {}) {}

  async enqueue(job: TurnJob): Promise<void> {
    if (this.closed) throw queueUnavailable('the in-process queue is closed');
    const id = turnJobId(job.executionId);
    if (this.known.has(id)) return;
    this.known.set(id, { job, attemptsMade: 0 });
    this.ready.push(id);
    this.pump();
  }

  /** Always available while this process runs it (until closed). */
  isAvailable(): boolean {
    return !this.closed;
  }

  async health(): Promise<QueueHealth> {
    return { kind: 'in-process', ok: !this.closed, state: this.closed ? 'closed' : 'running' };
  }

  consume(handler: TurnJobHandler): void {
    this.handler = handler;
    this.pump();
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    while (this.active > 0) await new Promise((r) => setTimeout(r, 10));
  }

  private pump() {
    const concurrency = this.options.concurrency ?? 8;
    while (this.handler && !this.closed && this.active < concurrency && this.ready.length > 0) {
      const id = this.ready.shift()!;
      void this.run(id);
    }
  }

  private later(id: string, delayMs: number) {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      this.ready.push(id);
      this.pump();
    }, delayMs);
    this.timers.add(timer);
  }

  private async run(id: string) {
    const entry = this.known.get(id)!;
    const maxAttempts = this.options.maxAttempts ?? TURN_JOB_ATTEMPTS;
    const attempt: JobAttempt = { attemptsMade: entry.attemptsMade, maxAttempts };
    this.active++;
    try {
      const outcome = await this.handler!(entry.job, attempt);
      if (outcome.kind === 'later') this.later(id, outcome.delayMs);
      else this.known.delete(id);
    } catch (error) {
      entry.attemptsMade++;
      // like BullMQ's UnrecoverableError: a failure retrying cannot fix ends the job at once
      const willRetry = !isPermanentFailure(error) && entry.attemptsMade < maxAttempts;
      this.options.onError?.(error, { willRetry });
      if (!willRetry) this.known.delete(id);
      else this.later(id, (this.options.backoffMs ?? 500) * 2 ** (entry.attemptsMade - 1));
    } finally {
      this.active--;
      this.pump();
    }
  }
}
