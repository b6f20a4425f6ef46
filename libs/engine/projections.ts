import type { Kysely } from 'kysely';
import {
  asyncProjections,
  type Database,
  executionsProjection,
  inlineProjections,
  ProjectionRunner,
  summariesProjection,
  turnMessagesProjection,
} from '../events';
import { prefixReportsProjection } from '../reports';
import type { Logger } from './logger';

/** Applied in the transaction of each append (the store's `inline`): what a turn reads right away. */
export const engineInlineProjections = inlineProjections;

/** Run from the log, off the turn's path: the event library's async projections and the prefix reports. */
export const engineAsyncProjections = [...asyncProjections, prefixReportsProjection];

/** The projections the engine's runner keeps (the async ones; the inline ones need no catch-up). */
export const engineProjections = engineAsyncProjections;

/** Projections a turn reads before it runs: a session stopped in one of them cannot run turns. */
export const TURN_READ_PROJECTIONS: readonly string[] = [executionsProjection.name, turnMessagesProjection.name, summariesProjection.name];

export function createProjectionRunner(db: Kysely<Database>, logger?: Logger): ProjectionRunner {
  return new ProjectionRunner(db, { projections: engineAsyncProjections, ...(logger ? { logger } : {}) });
}
