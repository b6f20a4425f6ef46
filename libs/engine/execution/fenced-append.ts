import { type EventStore, isDatabaseUnavailable, type NewEvent, type StoredEvent, validateEvent } from '../../events';
import { FencedOutError } from '../errors';
import type { ExecutionJournal, SessionJournal } from '../journal/journal';
import type { FreshResult } from '../plugin-host/resolver';
import { stageGathering } from './stage-gathering';

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
 * this process, instead of contending for the stream's lock. Appends queued on the journal while
 * one is being made (siblings' model calls and outputs) are made together when it is stored, as one
 * append of the store (group commit, `appendGroup`): each built as if those before it were stored.
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

  /**
   * `append`, calling `stored` in turn (before the next append on the journal builds) once its
   * events are stored. `stored` is also called when a later append of the same group builds
   * (`appendGroup`: as if the events were stored), and then undone with what it returns.
   */
  protected appendStoring(build: (execution: ExecutionJournal) => NewEvent[], stored?: Stored): Promise<number> {
    return new Promise<number>((resolve, reject) => {
      const gathering = stageGathering(this.journal);
      // true: this append records the answer of the run's model call that just came back
      const answers = gathering?.queued(this.ref) ?? false;
      // settled: the run goes on with its own work, on its way to its next append
      const settled = gathering ? () => gathering.resumed(this.ref) : () => undefined;
      const queued: QueuedAppend = {
        run: this,
        build,
        stored,
        resolve: (version) => {
          settled();
          resolve(version);
        },
        reject: (error) => {
          settled();
          reject(error);
        },
      };
      const open = openGroups.get(this.journal);
      if (open && open.store === this.store) {
        open.appends.push(queued);
        return;
      }
      const group: AppendGroup = { store: this.store, appends: [queued] };
      openGroups.set(this.journal, group);
      // while siblings of the stage are on their way to an append (their own work; their model calls
      // in flight too when this one records an answer), the group waits for them (`gatherStage`)
      const append = () => ExecutionRun.appendGroup(this.journal, group);
      void onJournal(this.journal, gathering ? gathering.waitingFor(append, answers) : append, group);
    });
  }

  /** One append alone (a group of one): as the attempt's appends always were made. */
  private async appendNow(built: (execution: ExecutionJournal) => NewEvent[], stored?: Stored): Promise<number> {
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
   * Builds one append of a group (`appendGroup`) from the journal as it stands (in the group's
   * tentative pass): its events, with what the journal carries for this attempt in front of them
   * when it builds any (`carried`: the carry is then taken, as the append that stores it takes it).
   */
  private buildInGroup(built: (execution: ExecutionJournal) => NewEvent[]): { events: NewEvent[]; carried: boolean } {
    const carried = this.carried();
    const events = built(this.execution);
    if (events.length === 0) return { events: [], carried: false };
    return carried ? { events: [...carried.build(this.fenced()), ...events], carried: true } : { events, carried: false };
  }

  /**
   * Makes a group's appends, in the order they were queued, as ONE append of the store (one
   * statement when nothing came first; the append at the head under the stream's lock when
   * something did): group commit. Each is built (with its fence check) from the journal as the
   * builds before it in the group leave it, their events applied to the journal tentatively
   * (`SessionJournal.tentatively`; their `stored` called and undone), so each builds exactly what it
   * would have built appended alone after them; an append whose build throws (fenced out, a race)
   * fails alone and the rest go on without it, as they would have. When something came first, the
   * whole pass is made again from the journal that now holds it. What is stored is then applied for
   * real and each append's `stored` called, in order. Nothing is stored for any of them unless all
   * their events are (one transaction); a group the store refuses is made again one by one (see below).
   */
  private static async appendGroup(journal: SessionJournal, group: AppendGroup): Promise<void> {
    if (openGroups.get(journal) === group) openGroups.delete(journal);
    const { appends } = group;
    if (appends.length === 1) {
      const [only] = appends;
      await only.run.appendNow(only.build, only.stored).then(only.resolve, only.reject);
      return;
    }
    const pass = (): Built[] =>
      journal.tentatively((apply) => {
        const undo: (() => void)[] = [];
        // what the journal carried, once an append of the pass took it
        let taken: CarriedOn | undefined;
        try {
          return appends.map((queued): Built => {
            let built: { events: NewEvent[]; carried: boolean };
            let valid: NewEvent[];
            try {
              built = queued.run.buildInGroup(queued.build);
              valid = built.events.map(validateEvent);
            } catch (error) {
              return { error };
            }
            if (valid.length === 0) return { events: [], version: journal.version, carried: false };
            apply(valid.map((event, i) => tentativeEvent(queued.run, event, journal.version + i + 1)));
            if (built.carried) {
              taken = journalCarries.get(journal);
              journalCarries.delete(journal);
            }
            const undone = queued.stored?.();
            if (undone) undo.push(undone);
            // the validated events are stored: the store does not parse them again
            return { events: valid, version: journal.version, carried: built.carried };
          });
        } finally {
          for (const u of undo.reverse()) u();
          if (taken) journalCarries.set(journal, taken);
        }
      });
    const eventsOf = (builds: Built[]) => builds.flatMap((b) => ('events' in b ? b.events : []));
    let builds: Built[] = [];
    try {
      builds = pass();
      const events = eventsOf(builds);
      if (events.length > 0) {
        const { ref } = appends[0].run;
        const { appended } = await group.store.appendCatchingUp({
          tenantId: ref.tenantId,
          streamId: ref.sessionId,
          afterVersion: journal.version,
          events,
          // something came first: the journal takes it, and every append of the group is built again after it
          rebuild: (missed) => {
            journal.apply(missed);
            builds = pass();
            return eventsOf(builds);
          },
        });
        if (appended) {
          // made at the head, right after what the journal now holds
          journal.apply(appended.events);
          for (const [i, b] of builds.entries()) {
            if (!('events' in b) || b.events.length === 0) continue;
            if (b.carried) journalCarries.delete(journal);
            appends[i].stored?.();
          }
        }
      }
    } catch (error) {
      // Nothing of the group was stored (one append of the store). The database out of reach (or a
      // commit whose outcome is unknown): every append of the group fails with it, as each would
      // have. Refused (an inline projection failing on one runtime's events, a row the database
      // rejects): the appends are made again one by one, so the one whose events are refused fails
      // alone, with its own error, and each keeps the outcome of its own build (fenced out, a race).
      if (isDatabaseUnavailable(error)) for (const queued of appends) queued.reject(error);
      else for (const queued of appends) await queued.run.appendNow(queued.build, queued.stored).then(queued.resolve, queued.reject);
      return;
    }
    builds.forEach((b, i) => {
      if ('error' in b) appends[i].reject(b.error);
      else appends[i].resolve(b.version);
    });
  }

  /**
   * Reads what the session's log holds past the journal (a mid-turn message, another job's output),
   * serialized with this run's appends; then checks the fence (`FencedOutError` if it moved on).
   * The first refresh of a run made `current` (right after its read of the log) reads nothing: what
   * came in the moment since is met by the next append, which catches up under the stream's lock
   * (a mid-turn message it missed joins the next model call, or the commit after the output).
   */
  refresh(): Promise<ExecutionJournal> {
    // queued behind a group that waits for this run's next append: it cannot come before, so the group waits no more for it
    const gathering = stageGathering(this.journal);
    gathering?.blocked(this.ref);
    const read = onJournal(this.journal, async () => {
      if (!this.current) await this.catchUp();
      this.current = false;
      return this.execution;
    });
    return gathering ? read.finally(() => gathering.resumed(this.ref)) : read;
  }

  /**
   * `call` (this run's model call, sent once its `llm.calling` is stored) while it is in flight: the
   * groups of appends of the run's stage do not wait for this run meanwhile, but one recording a
   * sibling's answer (`gatherStage`).
   */
  sending<T>(call: Promise<T>): Promise<T> {
    return stageGathering(this.journal)?.away(this.ref, call) ?? call;
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
function onJournal<T>(journal: SessionJournal, write: () => Promise<T>, group?: AppendGroup): Promise<T> {
  // a write queued behind an open group closes it: an append queued after this write builds after it
  if (openGroups.get(journal) !== group) openGroups.delete(journal);
  const next = (journalChains.get(journal) ?? Promise.resolve()).then(write);
  journalChains.set(
    journal,
    next.catch(() => undefined),
  );
  return next;
}

/** What `stored` of an append returns: how to undo it (after a group's tentative pass), if anything. */
type Stored = () => (() => void) | void;

/** An append queued on a journal, not made yet. */
interface QueuedAppend {
  run: ExecutionRun;
  build: (execution: ExecutionJournal) => NewEvent[];
  stored: Stored | undefined;
  resolve: (version: number) => void;
  reject: (error: unknown) => void;
}

/** Appends queued one after another on a journal with nothing else between them: made as one append of the store. */
interface AppendGroup {
  store: EventStore;
  appends: QueuedAppend[];
}

/** What one append of a group built in a pass: its events (none: nothing to append) and the version after them, or the error its build threw. */
type Built = { events: NewEvent[]; version: number; carried: boolean } | { error: unknown };

/**
 * The group of appends queued last on each journal while it waits for its turn on the chain
 * (`onJournal`): appends queued on the journal meanwhile join it, until its turn comes or anything
 * else (a catch-up read) is queued behind it.
 */
const openGroups = new WeakMap<SessionJournal, AppendGroup>();

/** What the journal carried, taken by an append of a pass. */
type CarriedOn = NonNullable<ReturnType<(typeof journalCarries)['get']>>;

/** `event` as the journal would read it back once stored at `version` (the fold reads its type, data and version). */
function tentativeEvent(run: ExecutionRun, event: NewEvent, version: number): StoredEvent {
  return {
    globalPosition: 0,
    tenantId: run.ref.tenantId,
    streamId: run.ref.sessionId,
    streamVersion: version,
    type: event.type,
    data: event.data,
    metadata: {},
    recordedAt: new Date(0).toISOString(),
  } as StoredEvent;
}
