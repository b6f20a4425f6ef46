import { migrateToLatest, openDatabase, type OpenDatabase } from '../../libs/events';
import { createTestDatabase } from './stack';

/** A migrated database of the real PostgreSQL for a test file (or describe block): `open` and `url` once its `beforeAll` ran. */
export interface MigratedDatabase {
  readonly open: OpenDatabase;
  readonly url: string;
}

/**
 * Registers the `beforeAll` that creates a database on the test server, opens it (a pool of
 * `poolSize`, default 2) and migrates it, and the `afterAll` that closes and drops it. Hooks a file
 * registers after this call run after it (its rows are inserted into a migrated database).
 */
export function useMigratedDatabase(options: { poolSize?: number } = {}): MigratedDatabase {
  let database: { url: string; drop(): Promise<void> } | undefined;
  let open: OpenDatabase | undefined;
  beforeAll(async () => {
    database = await createTestDatabase();
    open = await openDatabase({ kind: 'postgres', url: database.url, poolSize: options.poolSize ?? 2 });
    await migrateToLatest(open.db);
  });
  afterAll(async () => {
    await open?.close();
    await database?.drop();
  });
  const ready = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('useMigratedDatabase: read before its beforeAll ran');
    return value;
  };
  return {
    get open() {
      return ready(open);
    },
    get url() {
      return ready(database).url;
    },
  };
}
