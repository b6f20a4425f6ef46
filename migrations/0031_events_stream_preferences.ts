import { type Kysely, sql } from 'kysely';
import { withLockTimeout } from './lock-timeout';

/**
 * A session's preference changes (`session.preferences-changed@1`) by (stream, version), in a
 * partial index that holds only them: the journal's read at a turn's first step takes the last one
 * before the pending suffix (`pendingSuffixQuery`, `lastBefore`). Without it that read walked the
 * session's whole stream before the suffix, backwards through (stream_id, stream_version),
 * filtering on the type, and found none in most sessions (issue 33: 97 of the statement's 159
 * buffer hits on a 650-event session, now 2; the walk grows with the session). An append of any
 * other type does not touch it.
 *
 * Built like `events_session_branches` (0020), in the migrations' transaction: the build holds the
 * log's SHARE lock, so appends wait for one read of the log (docs/operations.md: on a large log run
 * `npm run migrate` before starting new workers). It waits for that lock at most `LOCK_TIMEOUT`
 * (then fails with lock_not_available, having built nothing, and can be run again): queued behind a
 * long transaction that writes the log, the lock request would otherwise hold up every append
 * queued behind it (`withLockTimeout`).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await withLockTimeout(db, {
    statements: `create index events_stream_preferences on events (stream_id, stream_version)
        where type = 'session.preferences-changed@1';`,
  });
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index events_stream_preferences`.execute(db);
}
