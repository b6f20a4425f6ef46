import { Kysely, PostgresDialect } from 'kysely';
import { Pool, type PoolClient } from 'pg';
import { type Database, migrateToLatest, type OpenDatabase, openDatabase } from '../../libs/events';
import { createTestDatabase } from './stack';

/** A Kysely over its own pool on the real PostgreSQL that records every statement its connections send (BEGIN and COMMIT included). */
export interface CountingDatabase {
  db: Kysely<Database>;
  /** The statements sent since the last `reset`, in order, whitespace folded. */
  readonly statements: string[];
  /** Transactions begun since the last `reset`. */
  transactions(): number;
  reset(): void;
  close(): Promise<void>;
}

export function countingDatabase(url: string): CountingDatabase {
  const statements: string[] = [];
  const pool = new Pool({ connectionString: url, max: 4 });
  // as the engine's pools (libs/events/database.ts): an idle client's connection ending (the test
  // database dropped with its connections) is no test's failure
  pool.on('error', () => undefined);
  pool.on('connect', (client: PoolClient) => {
    const query = client.query.bind(client) as (...args: unknown[]) => unknown;
    (client as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
      const [config] = args;
      const text = typeof config === 'string' ? config : (config as { text?: string }).text;
      statements.push(String(text).replace(/\s+/g, ' ').trim());
      return query(...args);
    };
  });
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  return {
    db,
    statements,
    transactions: () => statements.filter((s) => /^begin\b/i.test(s)).length,
    reset: () => void statements.splice(0),
    close: () => db.destroy(),
  };
}

/** The counting database as the engine opens one (a turn harness's `database`): closed with it; no LISTEN. */
export function asOpenDatabase(counting: CountingDatabase): OpenDatabase {
  return {
    db: counting.db,
    kind: 'postgres',
    listen: () => Promise.reject(new Error('no LISTEN in this test')),
    close: () => counting.close(),
  };
}

/** A fresh database on the real PostgreSQL, migrated to the latest, and counting databases over it. */
export interface CountedDatabase {
  url: string;
  /** The first of `all`. */
  counting: CountingDatabase;
  /** `counters` counting databases (`countingDatabase`), each over its own pool. */
  all: CountingDatabase[];
  /** Closes the counting databases (again is harmless) and drops the database with its connections. */
  drop(): Promise<void>;
}

/**
 * The set-up of a suite that counts statements: a new database (`createTestDatabase`), migrated by a
 * connection of its own that is closed after (its statements are nobody's count), then `counters`
 * counting databases over it (one by default).
 */
export async function countedDatabase(options: { counters?: number } = {}): Promise<CountedDatabase> {
  const database = await createTestDatabase();
  const open = await openDatabase({ kind: 'postgres', url: database.url, poolSize: 1 });
  await migrateToLatest(open.db);
  await open.close();
  const all = Array.from({ length: Math.max(1, options.counters ?? 1) }, () => countingDatabase(database.url));
  return {
    url: database.url,
    counting: all[0],
    all,
    drop: async () => {
      for (const c of all) await c.close();
      await database.drop();
    },
  };
}
