import { type Kysely, sql } from 'kysely';

/**
 * Branches (`POST /v1/sessions/:id/branch`): a session's branches are the `session.branched@1`
 * events naming it as their parent; `GET /v1/sessions/:id` lists them through this partial index
 * (only branch events are in it), newest first, a bounded range read whatever the log's size.
 * A branch names a turn of its parent's history: `turn_messages` is read by (session, turn).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create index events_session_branches
    on events ((data->>'parentSessionId'), global_position)
    where type = 'session.branched@1'`.execute(db);
  await sql`create index turn_messages_session_turn on turn_messages (session_id, turn_id)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index turn_messages_session_turn`.execute(db);
  await sql`drop index events_session_branches`.execute(db);
}
