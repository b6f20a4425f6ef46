import { Kysely, Migrator, PostgresDialect } from 'kysely';
import { Pool } from 'pg';
import { migrations } from '../../migrations';
import { PGliteDialect } from './pglite-dialect';
import type { Database } from './schema';
import { EngineError } from '../errors';

export type DatabaseConfig =
  | {
      kind: 'postgres';
      /** What the API and the workers connect with (ideally the app role). */
      url: string;
      poolSize?: number;
      /** The owner role's URL: migrations (and the app role's grants) run through it. */
      migrationUrl?: string;
      /** The role the API and workers connect as: granted what it needs after each migration. */
      appRole?: string;
    }
  /** dataDir undefined: in memory. */
  | { kind: 'pglite'; dataDir?: string };

export interface OpenDatabase {
  db: Kysely<Database>;
  kind: DatabaseConfig['kind'];
  close(): Promise<void>;
}

export async function openDatabase(config: DatabaseConfig): Promise<OpenDatabase> {
  if (config.kind === 'postgres') {
    const pool = new Pool({ connectionString: config.url, max: config.poolSize ?? 10 });
    pool.on('error', () => undefined); // a dropped idle client is replaced on next checkout
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
    return { db, kind: 'postgres', close: () => db.destroy() };
  }
  const { PGlite } = await import('@electric-sql/pglite');
  const pglite = config.dataDir ? new PGlite(config.dataDir) : new PGlite();
  const db = new Kysely<Database>({ dialect: new PGliteDialect(pglite) });
  return { db, kind: 'pglite', close: () => db.destroy() };
}

export class MigrationError extends EngineError {
  readonly code = 'MIGRATION_FAILED';
  readonly category = 'internal';
  constructor(
    readonly migrationName: string | undefined,
    cause: unknown,
  ) {
    super(`migration ${migrationName ?? '(unknown)'} failed: ${cause instanceof Error ? cause.message : String(cause)}`);
  }
}

/** Applies every pending migration in order; returns the names applied now. */
export async function migrateToLatest(db: Kysely<Database>): Promise<string[]> {
  const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations } });
  const { error, results } = await migrator.migrateToLatest();
  const failed = results?.find((r) => r.status === 'Error');
  if (error) throw new MigrationError(failed?.migrationName, error);
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
