import type { Kysely } from 'kysely';
import { type Database, defaultProjections, ProjectionRunner } from '../events';
import { prefixReportsProjection } from '../reports';

/** Every projection the engine keeps: the event library's own and the prefix reports. */
export const engineProjections = [...defaultProjections, prefixReportsProjection];

export function createProjectionRunner(db: Kysely<Database>): ProjectionRunner {
  return new ProjectionRunner(db, engineProjections);
}
