import type { Kysely } from 'kysely';
import {
  AsyncProjector,
  type AsyncProjectorOptions,
  type Database,
  defaultProjections,
  executionsProjection,
  type Projection,
  ProjectionRunner,
  summariesProjection,
  traceEventsProjection,
  turnMessagesProjection,
} from '../events';
import { prefixReportsProjection } from '../reports';
import type { Logger } from './logger';

/** Projections off the turn's path, run by the AsyncProjector (per log partition, several processes sharing them). */
export const ASYNC_PROJECTIONS: readonly Projection[] = [traceEventsProjection, prefixReportsProjection];

/** Projections a turn reads before it runs: a session stopped in one of them cannot run turns. */
export const TURN_READ_PROJECTIONS: readonly string[] = [executionsProjection.name, turnMessagesProjection.name, summariesProjection.name];

/** Every projection the engine keeps. */
export const engineProjections: readonly Projection[] = [...defaultProjections, ...ASYNC_PROJECTIONS];

/**
 * The catch-up runner of the views a turn reads (executions, turn_messages, summaries). Transitional:
 * once those are applied inline with the append, this runner and its callers go.
 */
export function createProjectionRunner(db: Kysely<Database>, logger?: Logger): ProjectionRunner {
  return new ProjectionRunner(db, { projections: defaultProjections, ...(logger ? { logger } : {}) });
}

/** The projector of the async projections; `owner` is the worker id (or `replay:<pid>` for a replay). */
export function createAsyncProjector(
  db: Kysely<Database>,
  options: { owner: string; logger?: Logger } & Omit<AsyncProjectorOptions, 'db' | 'projections' | 'owner' | 'logger'>,
): AsyncProjector {
  return new AsyncProjector({ db, projections: ASYNC_PROJECTIONS, ...options });
}
