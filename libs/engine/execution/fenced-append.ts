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
 * written. Appends of every run on one journal are serialized (`onJournal`): sibling runtimes a
 * turn job runs inline share its journal, so each appends at the version the one before left, in
 * this process, instead of contending for the stream's lock.
 */
export class ExecutionRun {
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
    return this.appendStoring(build);
  }

  /** `append`, calling `stored` in turn (before the next append on the journal builds) once its events are stored. */
  protected appendStoring(build: (execution: ExecutionJournal) => NewEvent[], stored?: () => void): Promise<number> {
    return onJournal(this.journal, () => this.appendNow(build, stored));
  }

  private async appendNow(build: (execution: ExecutionJournal) => NewEvent[], stored?: () => void): Promise<number> {
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
    stored?.();
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
    return onJournal(this.journal, async () => {
      if (!this.current) await this.catchUp();
      this.current = false;
      return this.execution;
    });
  }

  private async catchUp() {
    this.journal.apply(await this.store.readStream(this.ref.sessionId, this.journal.version));
  }
}

/** The last write queued on each journal (an append, a catch-up read): the next one starts after it. */
const journalChains = new WeakMap<SessionJournal, Promise<unknown>>();

/**
 * Runs `write` once every write queued before it on `journal` has settled: the writes of every run
 * holding this journal object (the runtimes of a stage run inline share the turn job's) go one at a
 * time, each applying what it stored before the next builds, so none of them appends at a version
 * another of them left behind (no contention for the stream's lock between them, no gap in the journal).
 */
function onJournal<T>(journal: SessionJournal, write: () => Promise<T>): Promise<T> {
  const next = (journalChains.get(journal) ?? Promise.resolve()).then(write);
  journalChains.set(
    journal,
    next.catch(() => undefined),
  );
  return next;
}
