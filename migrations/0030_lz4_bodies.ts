import type { Kysely } from 'kysely';
import { withLockTimeout } from './lock-timeout';

/**
 * The columns that hold a turn's big bodies (an event's data, a trace event's data, a prefix
 * report's request body: ~2-130 KB each, a request grows with the session's history) are compressed
 * with lz4 instead of pglz where the server has it (issue 33: PostgreSQL's CPU per turn). Their
 * values over ~2 KB are compressed on every insert and decompressed on every read (the projector
 * reads every event it applies); pglz took about 40 % of the server's CPU of inserting an Emberback
 * turn's events in one statement (3.3 → 2.0 ms with lz4, 29 events, ~150 KB of JSON).
 *
 * Only how values are stored changes: what a read returns is the same (`events` stays append-only,
 * replay and audit read the same bytes); values written before keep their pglz compression, both
 * are read. The catalog change takes each table's ACCESS EXCLUSIVE lock and rewrites nothing; the
 * locks are held until the migrations' transaction ends. It waits for each lock at most
 * `LOCK_TIMEOUT` (`withLockTimeout`; then fails with lock_not_available, having changed nothing, and can be run again):
 * on a busy log a lock request queued behind a long transaction (a replay, a report) would
 * otherwise hold up every append queued behind it. The log's own lock is asked for last. A server
 * built without lz4 (PGlite, the embedded default, is one), or older than PostgreSQL 14 (no
 * per-column compression), keeps pglz: the migration does nothing there.
 */
const COLUMNS = [
  ['trace_events', 'data'],
  ['prefix_reports', 'body'],
  // the log last: its lock is asked for once the others are held, so appends wait on it at most
  // LOCK_TIMEOUT (not while the migration waits for another table)
  ['events', 'data'],
] as const;

export async function up(db: Kysely<unknown>): Promise<void> {
  await setCompression(db, 'lz4');
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await setCompression(db, 'default');
}

async function setCompression(db: Kysely<unknown>, method: 'lz4' | 'default'): Promise<void> {
  // dynamic statements (`execute`): a server before 14 does not parse `set compression`, and a block
  // is parsed whole before it runs, so written out they would fail there before the version check
  const alters = COLUMNS.map(([table, column]) => `execute 'alter table ${table} alter column ${column} set compression ${method}';`).join('\n      ');
  // one block: on a server without lz4 the first alter fails (feature_not_supported) and none is made
  await withLockTimeout(db, {
    guard: `if current_setting('server_version_num')::int < 140000 then
        return; -- no per-column compression before PostgreSQL 14: pglz, as before
      end if;`,
    statements: alters,
    onError: `when feature_not_supported then
      null; -- built without lz4: pglz, as before (the block's settings are rolled back with it)`,
  });
}
