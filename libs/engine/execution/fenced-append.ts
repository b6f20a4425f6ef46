import type { EventStore, NewEvent } from '../../events';
import { FencedOutError } from '../errors';
import type { ExecutionJournal, SessionJournal } from '../journal/journal';
import type { FreshResult } from '../plugin-host/resolver';

/**
 * Handler results obtained before any append records them (the compaction barrier's estimate),
 * recorded with the next append of the attempt on the journal: `build` makes their events (and
 * checks what they were read from) at that append, from the journal as it stands.
 */
export interface CarriedEvents {
  results: readonly FreshResult[];
  build: (execution: ExecutionJournal) => NewEvent[];
}

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
  /** Whether `carry` may leave events to the attempt's next append on the journal (one is sure to come: the stage's runtimes run inline next). */
  private readonly carries: boolean;

  constructor(
    private readonly store: EventStore,
    readonly journal: SessionJournal,
    readonly ref: ExecutionRef,
    readonly attempt: number,
    options: { current?: boolean; carries?: boolean } = {},
  ) {
    this.current = options.current ?? false;
    this.carries = options.carries ?? false;
  }

  /**
   * The execution as the journal has it now (kept current by every append), with the results
   * carried to the attempt's next append (`carry`) as if recorded.
   */
  get execution(): ExecutionJournal {
    return withCarried(this.fenced(), this.carried());
  }

  /** The execution as the journal has it (nothing carried), after the fence check. */
  protected fenced(): ExecutionJournal {
    const execution = this.journal.get(this.ref.executionId);
    if (!isCurrentAttempt(execution, this.attempt)) throw new FencedOutError(this.ref.executionId, this.attempt);
    return execution;
  }

  /**
   * `carried` is recorded with the next append of this attempt on the journal (any run's: the
   * runtimes of a stage run inline share it), in front of its events, instead of in an append of its
   * own (nothing is sent or run on them between); until then the builds see its results as
   * recorded. False when the run was not made to carry (no append of the attempt may follow on
   * this journal) or the journal carries some already: append them.
   */
  carry(carried: CarriedEvents): boolean {
    if (!this.carries || journalCarries.has(this.journal)) return false;
    journalCarries.set(this.journal, { executionId: this.ref.executionId, attempt: this.attempt, carried });
    return true;
  }

  /** What the journal carries for this attempt's next append, if anything. */
  private carried(): CarriedEvents | undefined {
    const carry = journalCarries.get(this.journal);
    return carry && carry.executionId === this.ref.executionId && carry.attempt === this.attempt ? carry.carried : undefined;
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

  private async appendNow(built: (execution: ExecutionJournal) => NewEvent[], stored?: () => void): Promise<number> {
    const carried = this.carried();
    // what the journal carries goes in front of the first events this attempt appends (checked and built at that append)
    const build = carried
      ? (execution: ExecutionJournal) => {
          const events = built(execution);
          return events.length === 0 ? [] : [...carried.build(this.fenced()), ...events];
        }
      : built;
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
    if (carried) journalCarries.delete(this.journal);
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

/** Handler results carried to the next append on each journal (`ExecutionRun.carry`), for one attempt of one execution. */
const journalCarries = new WeakMap<SessionJournal, { executionId: string; attempt: number; carried: CarriedEvents }>();

/** `execution` with the carried results as if recorded (those it holds already stand). */
function withCarried(execution: ExecutionJournal, carried: CarriedEvents | undefined): ExecutionJournal {
  const results = carried?.results.filter((r) => !execution.extensionResults.has(r.key)) ?? [];
  if (results.length === 0) return execution;
  return { ...execution, extensionResults: new Map([...execution.extensionResults, ...results.map((r) => [r.key, r.result] as const)]) };
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
