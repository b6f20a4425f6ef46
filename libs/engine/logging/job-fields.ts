import type { LogFields } from './logger';
import type { RuntimeJob, TurnJob } from '../queue/port';

/**
 * The ids a line about a job carries: tenant, session, execution, the attempt (a runtime job's,
 * or the one a turn job claimed) and the runtime (`pluginId/runtimeId`); absent ones left out.
 */
export function jobLogFields(job: TurnJob | RuntimeJob, claimedAttempt?: number | null): LogFields {
  const runtime = 'pluginId' in job ? { attempt: job.attempt, runtime: `${job.pluginId}/${job.runtimeId}` } : {};
  return {
    tenantId: job.tenantId,
    sessionId: job.sessionId,
    executionId: job.executionId,
    ...(claimedAttempt !== undefined && claimedAttempt !== null ? { attempt: claimedAttempt } : {}),
    ...runtime,
  };
}
