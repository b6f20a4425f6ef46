import { ConcurrencyError, type EventStore, type NewEvent } from '../../events';
import { FencedOutError } from '../errors';
import type { ExecutionJournal, SessionJournal } from '../journal/journal';

/** How many times an append is tried again when other appends to the session come first. */
const MAX_APPEND_TRIES = 100;

export interface ExecutionRef {
  tenantId: string;
  sessionId: string;
  executionId: string;
}

/** True when `attempt` is the execution's current attempt and it has not ended. */
export function isCurrentAttempt(execution: ExecutionJournal | undefined, attempt: number): execution is ExecutionJournal {
  return execution !== undefined && execution.status === 'pending' && execution.latestAttempt === attempt;
}

/**
 * Appends of one attempt of one execution, fenced by the attempt: each append is made at the
 * journal's version after checking that the attempt is still the current one and the execution
 * still pending. An append that loses to another append of the session (an input, another attempt)
 * reads what came first into the journal and is checked and tried again, so a stale attempt can
 * never write. Appends of one run are serialized.
 */
export class ExecutionRun {
  private appendChain: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly store: EventStore,
    readonly journal: SessionJournal,
    readonly ref: ExecutionRef,
    readonly attempt: number,
  ) {}

  /** The execution as the journal has it now (kept current by every append). */
  get execution(): ExecutionJournal {
    const execution = this.journal.get(this.ref.executionId);
    if (!isCurrentAttempt(execution, this.attempt)) throw new FencedOutError(this.ref.executionId, this.attempt);
    return execution;
  }

  /**
   * Appends what `build` returns, built from the journal as it is at that moment (after the fence
   * check, again on every retry); `build` returning an empty list appends nothing. Resolves to the
   * stream version after the append (the journal's version when nothing was appended).
   */
  append(build: (execution: ExecutionJournal) => NewEvent[]): Promise<number> {
    const next = this.appendChain.then(() => this.appendNow(build));
    this.appendChain = next.catch(() => undefined);
    return next;
  }

  private async appendNow(build: (execution: ExecutionJournal) => NewEvent[]): Promise<number> {
    for (let tries = 0; ; tries++) {
      const events = build(this.execution);
      if (events.length === 0) return this.journal.version;
      try {
        const r = await this.store.append({ tenantId: this.ref.tenantId, streamId: this.ref.sessionId, expectedVersion: this.journal.version, events });
        // made at the journal's version: the journal plus these events is the stream up to them
        this.journal.apply(r.events);
        return r.version;
      } catch (error) {
        if (!(error instanceof ConcurrencyError) || tries >= MAX_APPEND_TRIES) throw error;
        await this.catchUp();
      }
    }
  }

  /**
   * Reads what the session's log holds past the journal (a mid-turn message, another job's output),
   * serialized with this run's appends; then checks the fence (`FencedOutError` if it moved on).
   */
  refresh(): Promise<ExecutionJournal> {
    const next = this.appendChain.then(async () => {
      await this.catchUp();
      return this.execution;
    });
    this.appendChain = next.catch(() => undefined);
    return next;
  }

  private async catchUp() {
    this.journal.apply(await this.store.readStream(this.ref.sessionId, this.journal.version));
  }
}
