import type { EventStore, NewEvent } from '../../events';
import { FencedOutError } from '../errors';
import type { ExecutionJournal, SessionJournal } from '../journal/journal';
import { type CarriedEvents, type ExecutionRef, ExecutionRun } from './fenced-append';

export type { CarriedEvents } from './fenced-append';

/**
 * An attempt's claim (`execution.started@1`, made from the journal at `latestAttempt + 1`) not
 * appended yet: it goes in front of the first events the attempt appends (`ClaimingRun`).
 */
export interface PendingClaim {
  readonly attempt: number;
  /** The registry generation the claim records (the execution's, else the process's current one). */
  readonly generation: string;
  /** The turn job the claim names (`execution.started`'s `claimant`), when its queue gives one. */
  readonly claimant?: string;
  readonly event: NewEvent;
  /** Set once an append that carries the claim is stored. */
  landed: boolean;
  /** Events carried with the claim, after it (`ClaimingRun.carry`). */
  carried?: CarriedEvents;
}

/**
 * An `ExecutionRun` whose attempt is claimed by its first append: until an append carrying the
 * claim is stored, every append puts `execution.started@1` in front of its events (one append, one
 * transaction, instead of the claim's own before them), and the fence is the claim's: the
 * execution still pending and no attempt started since the claim was made (`latestAttempt` one
 * below this attempt). Another claim stored first (a stall twin's copy of the turn job claiming
 * the same attempt number, or a newer attempt) fences this run out, under the stream's lock, so
 * two claims of one attempt are never both stored. The builds see the execution as the claim
 * leaves it (this attempt the latest). An append that builds nothing carries no claim either.
 * Once the claim is stored it is an `ExecutionRun` like any other.
 */
export class ClaimingRun extends ExecutionRun {
  constructor(
    store: EventStore,
    journal: SessionJournal,
    ref: ExecutionRef,
    readonly claim: PendingClaim,
    options: { current?: boolean; carries?: boolean } = {},
  ) {
    super(store, journal, ref, claim.attempt, options);
  }

  /**
   * The execution as the claim (and the results carried with it) leave it while the claim is
   * pending; `FencedOutError` when another claim came first or it ended.
   */
  override get execution(): ExecutionJournal {
    if (this.claim.landed) return super.execution;
    const claimed = this.claimed();
    const carried = this.claim.carried?.results.filter((r) => !claimed.extensionResults.has(r.key)) ?? [];
    if (carried.length === 0) return claimed;
    return { ...claimed, extensionResults: new Map([...claimed.extensionResults, ...carried.map((r) => [r.key, r.result] as const)]) };
  }

  /**
   * While the claim is pending, `carried` is recorded with it (events after the claim, before those
   * of the append that stores it) instead of in an append of its own; the builds see its results
   * as recorded. Once it is stored, `ExecutionRun.carry`. False when the claim (or the journal) carries some already.
   */
  override carry(carried: CarriedEvents): boolean {
    // stored already: carried to the attempt's next append like any run's
    if (this.claim.landed) return super.carry(carried);
    if (this.claim.carried) return false;
    this.claim.carried = carried;
    return true;
  }

  /** The execution the builds see, nothing carried: the claim's while it is pending. */
  protected override fenced(): ExecutionJournal {
    return this.claim.landed ? super.fenced() : this.claimed();
  }

  /** The execution as the claim leaves it (nothing carried), after the claim's fence. */
  private claimed(): ExecutionJournal {
    const execution = this.journal.get(this.ref.executionId);
    if (execution === undefined || execution.status !== 'pending' || execution.latestAttempt !== this.attempt - 1) {
      throw new FencedOutError(this.ref.executionId, this.attempt);
    }
    return { ...execution, latestAttempt: this.attempt, latestClaimant: this.claim.claimant, generation: execution.generation ?? this.claim.generation };
  }

  override append(build: (execution: ExecutionJournal) => NewEvent[]): Promise<number> {
    return this.appendClaiming(build);
  }

  /**
   * Stores the claim alone when no append carried it yet (before recording a failure of the
   * attempt): what it carries is left (results no call used; their checks cannot fail the claim).
   */
  land(): Promise<number> {
    return this.appendClaiming(() => [], true);
  }

  /**
   * Whether the claim goes with the events is decided in the build, which runs in turn with every
   * other append on the journal (`ExecutionRun`): runs sharing one claim (the runtimes of a stage
   * run inline) carry it once, with the first of their appends to store events; `landed` is set
   * before the next one builds (in a group, for its pass: `ExecutionRun.appendStoring`).
   */
  private appendClaiming(build: (execution: ExecutionJournal) => NewEvent[], alone = false): Promise<number> {
    let carried = false;
    return this.appendStoring(
      (execution) => {
        carried = false;
        if (this.claim.landed) return alone ? [] : build(execution);
        const events = build(execution);
        // the last build is what was stored (a catch-up builds again)
        carried = events.length > 0 || alone;
        if (!carried) return [];
        return [this.claim.event, ...(alone ? [] : (this.claim.carried?.build(this.claimed()) ?? [])), ...events];
      },
      () => {
        if (!carried || this.claim.landed) return;
        this.claim.landed = true;
        // a later append of the same group builds as if the claim were stored; its pass then undoes it
        return () => {
          this.claim.landed = false;
        };
      },
    );
  }
}
