import { Kysely, PostgresDialect } from 'kysely';
import { Pool, type PoolClient } from 'pg';
import type { Database } from '../../libs/events';

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
