import { ConcurrencyError, diagnosticText } from '../../events';
import { EngineError } from '../../errors';
import type { TurnJob } from '../queue';
import type { TurnDeps } from './deps';
import { handOff } from './hand-off';
import { loadSessionJournal } from './session-reads';

/** How many times the failure is tried again when other appends to the session come first. */
const MAX_TRIES = 20;

export interface FailureToRecord {
  error: unknown;
  /** Only while this attempt is the current one (a runtime job's); absent: whatever attempt is current (the turn job's). */
  attempt?: number;
}

/**
 * Records `execution.failed` for an execution still pending (with the error's code and message),
 * then hands the session off to its next execution. Resolves to false, writing nothing, when the
 * execution already ended or (with `attempt`) a newer attempt has taken it over.
 */
export async function recordFailure(deps: TurnDeps, job: TurnJob, failure: FailureToRecord): Promise<boolean> {
  for (let tries = 0; ; tries++) {
    const journal = await loadSessionJournal(deps, job.sessionId);
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
            data: { executionId: job.executionId, turnId: execution.turnId, attempt: execution.latestAttempt, error: describe(failure.error) },
          },
        ],
      });
      journal.apply(appended.events);
    } catch (error) {
      if (!(error instanceof ConcurrencyError) || tries >= MAX_TRIES) throw error;
      continue;
    }
    await handOff(deps, job, journal);
    return true;
  }
}

function describe(error: unknown): { code: string; message: string } {
  const code = error instanceof EngineError ? error.code : error instanceof Error ? error.name : 'UNKNOWN';
  return { code: diagnosticText(code), message: diagnosticText(error instanceof Error ? error.message : String(error)) };
}
