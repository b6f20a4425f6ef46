import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { DatabaseConfig } from '../libs/events';

/** A database named on the command line: a Postgres URL, a PGlite data directory, or the embedded default's path. */
export function databaseFromArg(arg: string): DatabaseConfig {
  if (/^postgres(ql)?:\/\//.test(arg)) return { kind: 'postgres', url: arg };
  if (existsSync(join(arg, 'PG_VERSION'))) return { kind: 'pglite', dataDir: arg };
  if (existsSync(join(arg, 'pglite', 'PG_VERSION'))) return { kind: 'pglite', dataDir: join(arg, 'pglite') };
  throw new Error(`${arg}: not a postgres:// URL, a PGlite data directory, or an embedded data directory (.covel)`);
}
