import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { PGlite, PGliteOptions } from '@electric-sql/pglite';
import { Kysely, Migrator, PostgresDialect, sql } from 'kysely';
import { migrations } from '../../migrations';
import { acquireDataDirLock } from './data-dir-lock';
import { countPgClient } from './pg-counts';
import { type Listening, type ListenOptions, SharedListen } from './pg-listen';
import { prepareHotStatements } from './pg-prepared';
import { PGliteDialect } from './pglite-dialect';
import type { Database } from './schema';
import { EngineError } from '../errors';

/** How long a new PostgreSQL connection (or a free pool slot) is waited for before the call fails as unavailable. */
export const DATABASE_CONNECT_TIMEOUT_MS = 1_500;

export type DatabaseConfig =
  | {
      kind: 'postgres';
      /** What the API and the workers connect with (ideally the app role). */
      url: string;
      poolSize?: number;
      connectTimeoutMs?: number;
      /** The owner role's URL: migrations (and the app role's grants) run through it. */
      migrationUrl?: string;
      /** The role the API and workers connect as: granted what it needs after each migration. */
      appRole?: string;
    }
  /** dataDir undefined: in memory. */
  | { kind: 'pglite'; dataDir?: string };

export type { Listening, ListenOptions } from './pg-listen';

export interface OpenDatabase {
  db: Kysely<Database>;
  kind: DatabaseConfig['kind'];
  /**
   * LISTEN on `channel`: `onNotify` gets each notification's payload. PostgreSQL: on the handle's
   * one LISTEN connection, shared by every channel and call, not from the pool (`SharedListen`,
   * opened by the first call, ended with the last subscription); PGlite: the in-process instance's
   * own notifications.
   * Rejects when the connection cannot be made; a subscription lost later calls `onLost`.
   */
  listen(channel: string, onNotify: (payload: string) => void, options?: ListenOptions): Promise<Listening>;
  close(): Promise<void>;
}

export async function openDatabase(config: DatabaseConfig): Promise<OpenDatabase> {
  if (config.kind === 'postgres') {
    // loaded here: the embedded default (PGlite) never needs the driver, and every process and test file would pay for it
    const { Pool } = await import('pg');
    const pool = new Pool({
      connectionString: config.url,
      max: config.poolSize ?? 10,
      // an unreachable server fails a call in bounded time (then classified by databaseUnavailable), never hangs it
      connectionTimeoutMillis: config.connectTimeoutMs ?? DATABASE_CONNECT_TIMEOUT_MS,
      // lets the OS notice a peer that vanished without closing the connection
      keepAlive: true,
      // the named statements (pg-prepared.ts) keep one generic plan from their first run: with the
      // default (auto) each of a connection's first five runs of a text is planned anew, and with a
      // pool of connections and a few dozen hot texts that was most runs (issue 33); the hot
      // statements are key lookups and index ranges, planned alike whatever their parameters
      options: '-c plan_cache_mode=force_generic_plan',
    });
    pool.on('error', () => undefined); // a dropped idle client is replaced on next checkout
    // A checked-out client has no error listener of the pool's: a connection that dies between two
    // statements of a transaction would emit an unhandled 'error' and kill the process. With this
    // listener the next statement fails (classified as unavailable) and the pool drops the client.
    pool.on('connect', (client) => {
      client.on('error', () => undefined);
      prepareHotStatements(client); // the texts sent over and over go as named prepared statements
      countPgClient(client); // covel_pg_statements_total, covel_pg_transactions_total
    });
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
    // every channel of this handle on one LISTEN connection (a notifying commit wakes each listening backend)
    const listening = new SharedListen({
      connectionString: config.url,
      connectionTimeoutMillis: config.connectTimeoutMs ?? DATABASE_CONNECT_TIMEOUT_MS,
      // its only queries are LISTENs: a server that does not answer fails one in bounded time too
      query_timeout: config.connectTimeoutMs ?? DATABASE_CONNECT_TIMEOUT_MS,
      keepAlive: true,
    });
    return { db, kind: 'postgres', listen: (channel, onNotify, options) => listening.listen(channel, onNotify, options), close: () => db.destroy() };
  }
  const { PGlite } = await import('@electric-sql/pglite');
  const template = pgliteTemplate();
  const assets = await workerAssets();
  if (!config.dataDir) {
    const pglite = new PGlite({ ...assets, ...(template ? { loadDataDir: template } : {}) });
    await pglite.waitReady;
    return onPGlite(pglite, () => undefined);
  }
  // one process per data directory: every opener (server, tools, tests) passes here
  const lock = acquireDataDirLock(config.dataDir);
  try {
    // a template seeds only a directory that holds no database yet
    const fresh = template && !existsSync(join(config.dataDir, 'PG_VERSION'));
    const pglite = new PGlite(config.dataDir, { ...assets, ...(fresh ? { loadDataDir: template } : {}) });
    await pglite.waitReady;
    return onPGlite(pglite, () => lock.release());
  } catch (error) {
    lock.release();
    throw error;
  }
}

function onPGlite(pglite: PGlite, afterClose: () => void): OpenDatabase {
  const db = new Kysely<Database>({ dialect: new PGliteDialect(pglite) });
  return {
    db,
    kind: 'pglite',
    // through the dialect's one connection, so the LISTEN never lands inside another caller's transaction
    async listen(channel, onNotify) {
      const unlisten = await db.connection().execute(() => pglite.listen(channel, onNotify));
      return {
        async close() {
          if (!pglite.closed) await db.connection().execute(() => unlisten());
        },
      };
    },
    async close() {
      try {
        await db.destroy();
        if (!pglite.closed) await pglite.close(); // Kysely skips a driver it never used
      } finally {
        afterClose();
      }
    },
  };
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

/**
 * Applies every pending migration in order; returns the names applied now. A database that has
 * applied every migration already, in order, and no other (kysely's migrator would do nothing) is
 * left as it is after two small reads: the migrator first reads the catalogs through kysely's
 * introspector (each migration table's columns, 70-250 ms of PGlite CPU a start) and takes its
 * lock, on every engine start.
 */
export async function migrateToLatest(db: Kysely<Database>): Promise<string[]> {
  if (await appliedEveryMigration(db)) return [];
  const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations } });
  const { error, results } = await migrator.migrateToLatest();
  const failed = results?.find((r) => r.status === 'Error');
  if (error) throw new MigrationError(failed?.migrationName, error);
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}

/** Whether the migration table holds every known migration, in the migrator's order (its timestamp, then its name), and no other. */
async function appliedEveryMigration(db: Kysely<Database>): Promise<boolean> {
  const table = await sql<{ present: boolean }>`select to_regclass('kysely_migration') is not null as present`.execute(db);
  if (!table.rows[0]?.present) return false;
  const { rows } = await sql<{ name: string; timestamp: string }>`select name, timestamp from kysely_migration`.execute(db);
  // as kysely's migrator orders them (Migrator#getExecutedMigrations)
  const applied = rows
    .sort((a, b) => (a.timestamp === b.timestamp ? a.name.localeCompare(b.name) : new Date(a.timestamp).getTime() - new Date(b.timestamp).getTime()))
    .map((r) => r.name);
  const known = Object.keys(migrations).sort();
  return applied.length === known.length && known.every((name, i) => applied[i] === name);
}

/**
 * `COVEL_PGLITE_TEMPLATE`: a PGlite data directory dump (`PGlite.dumpDataDir`) that a new PGlite
 * database starts from instead of an empty one (the migrator then applies only what the dump
 * lacks). The unit and integration suites set it to a migrated database made once per run
 * (test/support/pglite-template.ts), so each test skips the migrations. Unset: an empty database.
 */
function pgliteTemplate(): Blob | undefined {
  const file = process.env.COVEL_PGLITE_TEMPLATE;
  if (!file || !existsSync(file)) return undefined;
  // read once per process (a test file opens many databases), or per Jest worker
  if (templateBlob?.file !== file) templateBlob = { file, blob: new SharedBytesBlob(testWorkerAssets()?.bytes(file) ?? readFileSync(file)) };
  return templateBlob.blob;
}
let templateBlob: { file: string; blob: Blob } | undefined;

/**
 * What a Jest worker keeps for PGlite across its test files (test/support/test-environment.js puts it
 * on the test's global; absent elsewhere): PGlite's compiled wasm and file system bundle, and the
 * template's bytes. Each test file has its own module registry, in which PGlite's own caches start
 * empty: its first database would read and compile them again.
 */
interface TestWorkerAssets {
  wasmModule(): Promise<NonNullable<PGliteOptions['pgliteWasmModule']>>;
  fsBundle(): Buffer;
  bytes(file: string): Buffer;
}

function testWorkerAssets(): TestWorkerAssets | undefined {
  return (globalThis as { [key: symbol]: TestWorkerAssets | undefined })[Symbol.for('covel.pgliteAssets')];
}

/** PGlite's `pgliteWasmModule` and `fsBundle` from the Jest worker's assets; none elsewhere (PGlite reads its own). */
async function workerAssets(): Promise<Pick<PGliteOptions, 'pgliteWasmModule' | 'fsBundle'>> {
  const assets = testWorkerAssets();
  // PGlite hands the bundle's files out as views of its bytes (it never writes to them): shared, not copied
  return assets ? { pgliteWasmModule: await assets.wasmModule(), fsBundle: new SharedBytesBlob(assets.fsBundle()) } : {};
}

/**
 * A Blob whose `arrayBuffer()` hands out the same bytes every time instead of a fresh 16 MB copy
 * (20-50 ms of CPU, of about 490 ms a start). PGlite only reads a `loadDataDir` (its untar and its
 * file system copy what they keep), so the shared bytes are never changed. It keeps the file's
 * bytes as they were read: no copy into the Blob's own storage nor into a new buffer (two 16 MB
 * copies, about 110 ms of CPU per process, that is per test file); `size` is theirs, and
 * `stream()`, `slice()` and `text()` read a Blob of them made when called.
 */
export class SharedBytesBlob extends Blob {
  readonly #shared: ArrayBuffer;

  constructor(bytes: Buffer) {
    super([]); // the bytes are held below, not copied into the Blob's own storage
    // a Buffer this large is never a slice of node's small-buffer pool, but copy if it is
    const whole = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength && bytes.buffer instanceof ArrayBuffer;
    this.#shared = whole ? (bytes.buffer as ArrayBuffer) : new Uint8Array(bytes).buffer;
    // its size is that of the bytes it gives (the Blob's own storage is empty)
    Object.defineProperty(this, 'size', { value: this.#shared.byteLength, enumerable: true });
  }

  override arrayBuffer(): Promise<ArrayBuffer> {
    return Promise.resolve(this.#shared);
  }

  // what else reads a Blob reads a real one of the same bytes (made then: a copy)
  override stream(): ReadableStream<Uint8Array> {
    return this.#copy().stream();
  }

  override slice(start?: number, end?: number, contentType?: string): Blob {
    return this.#copy().slice(start, end, contentType);
  }

  override text(): Promise<string> {
    return this.#copy().text();
  }

  #copy(): Blob {
    return new Blob([new Uint8Array(this.#shared)]);
  }
}
