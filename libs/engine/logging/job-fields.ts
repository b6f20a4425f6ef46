import type { LogFields } from './logger';

/** The ids of a turn job (queue/port's TurnJob); a runtime job (RuntimeJob) adds its attempt and runtime. */
interface TurnJobIds {
  tenantId: string;
  sessionId: string;
  executionId: string;
}
interface RuntimeJobIds extends TurnJobIds {
  attempt: number;
  pluginId: string;
  runtimeId: string;
}

/** The ids of a world generation job (queue/port's WorldGenerationJob). */
interface WorldJobIds {
  tenantId: string;
  jobId: string;
}

/**
 * The ids a line about a job carries: tenant, session, execution, the attempt (a runtime job's,
 * or the one a turn job claimed) and the runtime (`pluginId/runtimeId`); absent ones left out.
 * A world generation job: its tenant and job id.
 */
export function jobLogFields(job: TurnJobIds | RuntimeJobIds | WorldJobIds, claimedAttempt?: number | null): LogFields {
  if (!('executionId' in job)) return { tenantId: job.tenantId, worldGenerationJobId: job.jobId };
  const runtime = 'pluginId' in job ? { attempt: job.attempt, runtime: `${job.pluginId}/${job.runtimeId}` } : {};
  return {
    tenantId: job.tenantId,
    sessionId: job.sessionId,
    executionId: job.executionId,
    ...(claimedAttempt !== undefined && claimedAttempt !== null ? { attempt: claimedAttempt } : {}),
    ...runtime,
  };
}
