import { readFileSync } from 'node:fs';
import { PGlite } from '@electric-sql/pglite';

/**
 * A PGlite database in memory with no migration applied, for a test that migrates it step by step:
 * from the unit project's dump of one (`COVEL_PGLITE_EMPTY_TEMPLATE`, test/support/pglite-template.ts),
 * else made by PostgreSQL's initdb (about 3 s of CPU more).
 */
export function emptyPGlite(): PGlite {
  const template = process.env.COVEL_PGLITE_EMPTY_TEMPLATE;
  return new PGlite(template ? { loadDataDir: new Blob([readFileSync(template)]) } : {});
}
