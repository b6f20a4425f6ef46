import { ConcurrencyError, diagnosticText } from '../../events';
import { EngineError } from '../../errors';
import { jobLogFields, logScope } from '../logging';
import type { TurnJob } from '../queue';
import type { TurnDeps } from '../execution/deps';
import { handOff } from '../execution/hand-off';
import { loadSessionJournal } from '../session/session-reads';

/** How many times the failure is tried again when other appends to the session come first. */
const MAX_TRIES = 20;

export interface FailureToRecord {
  error: unknown;
  /** Only while this attempt is the current one (a runtime job's); absent: whatever attempt is current (the turn job's). */
  attempt?: number;
  /** The job's attempts, when it failed after all of them (absent: a failure retrying cannot fix). */
  jobAttempts?: number;
}

/**
 * Records `execution.failed` for an execution still pending (with the error's code and message),
 * then hands the session off to its next execution. Resolves to false, writing nothing, when the
 * execution already ended or (with `attempt`) a newer attempt has taken it over.
 * The failed turn is logged once, when its failure is recorded: one error line with the job's ids
 * (tenant, session, execution, attempt, runtime, and the call when one was sent), the error's
 * code and category (its message only with `COVEL_LOG_PLAYER_TEXT`: it may quote the model).
 */
export async function recordFailure(deps: TurnDeps, job: TurnJob, failure: FailureToRecord): Promise<boolean> {
  for (let tries = 0; ; tries++) {
    const journal = await loadSessionJournal(deps, job);
    const execution = journal.get(job.executionId);
    if (!execution || execution.status !== 'pending') return false;
    if (failure.attempt !== undefined && execution.latestAttempt !== failure.attempt) return false;
    try {
      const appended = await deps.store.append({
        tenantId: job.tenantId,
        streamId: job.sessionId,
        expectedVersion: journal.version,
        events: [
          {
            type: 'execution.failed@1',
            data: {
              executionId: job.executionId,
              turnId: execution.turnId,
              attempt: execution.latestAttempt,
              error: describe(failure.error),
              // its plugin data leaves with it (storyEvents)
              discarded: true,
            },
          },
        ],
      });
      journal.apply(appended.events);
    } catch (error) {
      if (!(error instanceof ConcurrencyError) || tries >= MAX_TRIES) throw error;
      continue;
    }
    logFailure(deps, job, { ...failure, attempt: execution.latestAttempt });
    await handOff(deps, job, journal);
    return true;
  }
}

function logFailure(deps: TurnDeps, job: TurnJob, failure: FailureToRecord): void {
  const error = failure.error;
  const after = failure.jobAttempts !== undefined ? ` after ${failure.jobAttempts} attempts` : '';
  deps.logger.error(`execution ${job.executionId} failed${after}`, {
    ...jobLogFields(job),
    ...logScope(),
    attempt: failure.attempt,
    errorCode: describe(error).code,
    ...(error instanceof EngineError ? { errorCategory: error.category } : {}),
    err: error,
  });
}

function describe(error: unknown): { code: string; message: string } {
  const code = error instanceof EngineError ? error.code : error instanceof Error ? error.name : 'UNKNOWN';
  return { code: diagnosticText(code), message: diagnosticText(error instanceof Error ? error.message : String(error)) };
}
