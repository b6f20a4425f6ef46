import type { EventStore, NewEvent } from '../../events';
import { FencedOutError } from '../errors';
import type { ExecutionJournal, SessionJournal } from '../journal/journal';

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
 * Appends of one attempt of one execution, fenced by the attempt: each append is built from the
 * journal after checking that the attempt is still the current one and the execution still
 * pending. An append is made at the journal's version when nothing came past it (one statement, no
 * lock wait). Other appends to the session (an input, a sibling runtime's output, another attempt)
 * do not make it fail: it then waits for the session's lock and, holding it, reads what came first
 * into the journal, checks the fence and builds again (`EventStore.appendCatchingUp`), so a stale
 * attempt can never write and what is written is what a retry after a conflict would have
 * written. Appends of one run are serialized.
 */
export class ExecutionRun {
  private appendChain: Promise<unknown> = Promise.resolve();
  /** The journal is the log as it stands now (just read): the first `refresh` has nothing to catch up. */
  private current: boolean;

  constructor(
    private readonly store: EventStore,
    readonly journal: SessionJournal,
    readonly ref: ExecutionRef,
    readonly attempt: number,
    options: { current?: boolean } = {},
  ) {
    this.current = options.current ?? false;
  }

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
    const events = build(this.execution);
    if (events.length === 0) return this.journal.version;
    const { appended } = await this.store.appendCatchingUp({
      tenantId: this.ref.tenantId,
      streamId: this.ref.sessionId,
      afterVersion: this.journal.version,
      events,
      // only when the events could not go in at the journal's version: what came first (another
      // runtime's output, an input, a cancel), read under the stream's lock, is folded into the
      // journal, the fence checked again and the events built again from it
      rebuild: (missed) => {
        this.journal.apply(missed);
        return build(this.execution);
      },
    });
    if (!appended) return this.journal.version;
    // made at the head, right after what the journal now holds
    this.journal.apply(appended.events);
    return appended.version;
  }

  /**
   * Reads what the session's log holds past the journal (a mid-turn message, another job's output),
   * serialized with this run's appends; then checks the fence (`FencedOutError` if it moved on).
   * The first refresh of a run made `current` (right after its read of the log) reads nothing: what
   * came in the moment since is met by the next append, which catches up under the stream's lock
   * (a mid-turn message it missed joins the next model call, or the commit after the output).
   */
  refresh(): Promise<ExecutionJournal> {
    const next = this.appendChain.then(async () => {
      if (!this.current) await this.catchUp();
      this.current = false;
      return this.execution;
    });
    this.appendChain = next.catch(() => undefined);
    return next;
  }

  private async catchUp() {
    this.journal.apply(await this.store.readStream(this.ref.sessionId, this.journal.version));
  }
}
