import { type Kysely, sql } from 'kysely';

/**
 * A session's preference changes (`session.preferences-changed@1`) by (stream, version), in a
 * partial index that holds only them: the journal's read at a turn's first step takes the last one
 * before the pending suffix (`pendingSuffixQuery`, `lastBefore`). Without it that read walked the
 * session's whole stream before the suffix, backwards through (stream_id, stream_version),
 * filtering on the type, and found none in most sessions (issue 33: 97 of the statement's 159
 * buffer hits on a 650-event session, now 2; the walk grows with the session). An append of any
 * other type does not touch it.
 *
 * Built like `events_session_branches` (0020): in the migrations' transaction, appends wait for
 * the build (one read of the log).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create index events_stream_preferences
    on events (stream_id, stream_version)
    where type = 'session.preferences-changed@1'`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index events_stream_preferences`.execute(db);
}
