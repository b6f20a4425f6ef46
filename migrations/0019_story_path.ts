import { type Kysely, sql } from 'kysely';

/**
 * Issue 30 (players steer their story). A branch's read models hold its parent's rows up to the
 * branch point (folded from the parent's log), so a message's and a summary's id are unique within
 * a session, not across sessions: their keys become (session_id, id). Plugin data orders rows by
 * the global log position of their writes (a branch's own writes come after the parent's it
 * inherits, which stream versions could not say): bigint, as `events.global_position` is.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table turn_messages drop constraint turn_messages_pkey`.execute(db);
  await sql`alter table turn_messages add constraint turn_messages_pkey primary key (session_id, message_id)`.execute(db);
  await sql`alter table summaries drop constraint summaries_pkey`.execute(db);
  await sql`alter table summaries add constraint summaries_pkey primary key (session_id, summary_id)`.execute(db);
  await sql`alter table plugin_data alter column created_position type bigint, alter column updated_position type bigint`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table plugin_data alter column created_position type integer, alter column updated_position type integer`.execute(db);
  await sql`alter table summaries drop constraint summaries_pkey`.execute(db);
  await sql`alter table summaries add constraint summaries_pkey primary key (summary_id)`.execute(db);
  await sql`alter table turn_messages drop constraint turn_messages_pkey`.execute(db);
  await sql`alter table turn_messages add constraint turn_messages_pkey primary key (message_id)`.execute(db);
}
