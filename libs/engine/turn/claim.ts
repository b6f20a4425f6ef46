import { ConcurrencyError, type NewEvent } from '../../events';
import type { ExecutionJournal, SessionJournal } from '../journal/journal';
import type { TurnJob } from '../queue';
import type { TurnDeps } from '../execution/deps';
import type { PendingClaim } from '../execution/claiming-run';

/**
 * The claim of the execution's next attempt, made from the journal: `execution.started` with
 * `latestAttempt + 1`, not appended yet. The registry generation is captured once, at the first
 * start: a retried attempt keeps it. `claimant`: the turn job's (`TurnJobContext.claimant`), recorded
 * with the claim so that a later run of that job finds it there (`ownClaim`).
 */
export function nextClaim(deps: Pick<TurnDeps, 'options' | 'catalog'>, execution: ExecutionJournal, claimant?: string): PendingClaim {
  const attempt = execution.latestAttempt + 1;
  const generation = execution.generation ?? deps.catalog.generation;
  const event: NewEvent = {
    type: 'execution.started@1',
    data: {
      executionId: execution.executionId,
      turnId: execution.turnId,
      attempt,
      workerId: deps.options.workerId,
      generation,
      ...(claimant !== undefined ? { claimant } : {}),
    },
  };
  return { attempt, generation, event, landed: false, ...(claimant !== undefined ? { claimant } : {}) };
}

/**
 * The attempt a turn job claimed in an earlier run, found in the log: the latest attempt, when its
 * claim names this job (`claimant`); else null (a queue that keeps the claim with the job, or none of
 * this job's: never claimed, or a newer claim by another job fenced it out).
 */
export function ownClaim(execution: ExecutionJournal, claimant: string | undefined): number | null {
  return claimant !== undefined && execution.latestAttempt > 0 && execution.latestClaimant === claimant ? execution.latestAttempt : null;
}

/**
 * Claims the execution for a new attempt: `execution.started` with the next attempt number,
 * appended at the version the journal was read at (so no other append of the session, another
 * claim included, came in between). Every attempt before it is fenced out from then on. Resolves
 * to the claimed attempt, or null when the session moved on first (read it again and decide again).
 * (A turn job that runs its stage's one runtime inline defers the claim to its first append instead: `ClaimingRun`.)
 */
export async function claimExecution(
  deps: Pick<TurnDeps, 'store' | 'options' | 'catalog'>,
  job: TurnJob,
  journal: SessionJournal,
  execution: ExecutionJournal,
  claimant?: string,
): Promise<number | null> {
  const claim = nextClaim(deps, execution, claimant);
  try {
    const appended = await deps.store.append({ tenantId: job.tenantId, streamId: job.sessionId, expectedVersion: journal.version, events: [claim.event] });
    // made at the journal's version: the journal plus this event is the stream up to it
    journal.apply(appended.events);
  } catch (error) {
    if (error instanceof ConcurrencyError) return null;
    throw error;
  }
  return claim.attempt;
}
