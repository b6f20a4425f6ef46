import type { Kysely } from 'kysely';
import { type Database, defaultProjections, executionsProjection, ProjectionRunner, summariesProjection, turnMessagesProjection } from '../events';
import { prefixReportsProjection } from '../reports';
import { SessionProjectionStoppedError } from './errors';
import type { Logger } from './logger';

/** Every projection the engine keeps: the event library's own and the prefix reports. */
export const engineProjections = [...defaultProjections, prefixReportsProjection];

/** Projections a turn reads before it runs: a session stopped in one of them cannot run turns. */
export const TURN_READ_PROJECTIONS: readonly string[] = [executionsProjection.name, turnMessagesProjection.name, summariesProjection.name];

export function createProjectionRunner(db: Kysely<Database>, logger?: Logger): ProjectionRunner {
  return new ProjectionRunner(db, { projections: engineProjections, ...(logger ? { logger } : {}) });
}

/**
 * The one place the turn path brings read models up to date while projections are caught up
 * asynchronously: catches every projection up; given a session, refuses (SessionProjectionStoppedError)
 * when one the turn reads is stopped at that session's events (its rows would miss events).
 * Injected into the session service, the sweeper and the turn steps (`refreshReadModels`).
 */
export function readModelRefresher(projections: ProjectionRunner): (sessionId?: string) => Promise<void> {
  return async (sessionId) => {
    await projections.catchUp();
    if (sessionId === undefined) return;
    const stopped = (await projections.stoppedAt(sessionId)).filter((f) => TURN_READ_PROJECTIONS.includes(f.projection));
    if (stopped.length > 0) throw new SessionProjectionStoppedError(sessionId, stopped);
  };
}
