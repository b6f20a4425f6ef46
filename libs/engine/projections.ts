import type { Kysely } from 'kysely';
import { type Database, defaultProjections, executionsProjection, ProjectionRunner, summariesProjection, turnMessagesProjection } from '../events';
import { prefixReportsProjection } from '../reports';
import type { Logger } from './logger';

/** Every projection the engine keeps: the event library's own and the prefix reports. */
export const engineProjections = [...defaultProjections, prefixReportsProjection];

/** Projections a turn reads before it runs: a session stopped in one of them cannot run turns. */
export const TURN_READ_PROJECTIONS: readonly string[] = [executionsProjection.name, turnMessagesProjection.name, summariesProjection.name];

export function createProjectionRunner(db: Kysely<Database>, logger?: Logger): ProjectionRunner {
  return new ProjectionRunner(db, { projections: engineProjections, ...(logger ? { logger } : {}) });
}
