import { type Kysely, sql } from 'kysely';

/**
 * Each session's pending executions in submission order, and only those: the session's earliest
 * pending execution (the one it waits on) is the first entry of its range, whatever the length of
 * the session. Read by the API after an input (enqueue only the earliest), by the journal read,
 * and by the sweeper (each session's earliest pending execution, when idle).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create index executions_session_pending on executions (session_id, submitted_version) where status in ('queued', 'running')`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index executions_session_pending`.execute(db);
}
