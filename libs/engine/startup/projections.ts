import type { Kysely } from 'kysely';
import { AsyncProjector, type AsyncProjectorOptions, asyncProjections, type Database, inlineProjections, type Projection } from '../../events';
import { prefixReportsProjection } from '../../reports';
import { usageProjection } from '../../usage';
import type { Logger } from '../logging/logger';

/** Applied in the transaction of each append (the store's `inline`): what a turn reads right away. */
export const engineInlineProjections = inlineProjections;

/** Projections off the turn's path, run by the AsyncProjector (per log partition, several processes sharing them). */
export const ASYNC_PROJECTIONS: readonly Projection[] = [...asyncProjections, prefixReportsProjection, usageProjection];

/** The projector of the async projections; `owner` is the worker id (or `replay:<pid>` for a replay). */
export function createAsyncProjector(
  db: Kysely<Database>,
  options: { owner: string; logger?: Logger } & Omit<AsyncProjectorOptions, 'db' | 'projections' | 'owner' | 'logger'>,
): AsyncProjector {
  return new AsyncProjector({ db, projections: ASYNC_PROJECTIONS, ...options });
}
