import { ConcurrencyError } from '../../events';
import type { ExecutionJournal, SessionJournal } from '../journal/journal';
import type { TurnJob } from '../queue';
import type { TurnDeps } from '../execution/deps';

/**
 * Claims the execution for a new attempt: `execution.started` with the next attempt number,
 * appended at the version the journal was read at (so no other append of the session, another
 * claim included, came in between). Every attempt before it is fenced out from then on. Resolves
 * to the claimed attempt, or null when the session moved on first (read it again and decide again).
 */
export async function claimExecution(
  deps: Pick<TurnDeps, 'store' | 'options' | 'catalog'>,
  job: TurnJob,
  journal: SessionJournal,
  execution: ExecutionJournal,
): Promise<number | null> {
  const attempt = execution.latestAttempt + 1;
  try {
    const appended = await deps.store.append({
      tenantId: job.tenantId,
      streamId: job.sessionId,
      expectedVersion: journal.version,
      events: [
        {
          type: 'execution.started@1',
          // the registry generation is captured once, at the first start: a retried attempt keeps it
          data: {
            executionId: execution.executionId,
            turnId: execution.turnId,
            attempt,
            workerId: deps.options.workerId,
            generation: execution.generation ?? deps.catalog.generation,
          },
        },
      ],
    });
    // made at the journal's version: the journal plus this event is the stream up to it
    journal.apply(appended.events);
  } catch (error) {
    if (error instanceof ConcurrencyError) return null;
    throw error;
  }
  return attempt;
}
