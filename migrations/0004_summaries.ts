import { Kysely, sql } from 'kysely';

/** `summaries`: saved history summaries per session, in story order (spec §1 "History compaction"). */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table summaries (
      summary_id text primary key,
      tenant_id text not null,
      session_id text not null,
      seq integer not null,
      content text not null,
      message_ids jsonb not null,
      truncated boolean not null default false,
      created_at timestamptz not null
    )`.execute(db);
  await sql`create index summaries_session on summaries (session_id, seq)`.execute(db);
  await sql`create index turn_messages_uncompacted on turn_messages (session_id, ord) where not compacted`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index turn_messages_uncompacted`.execute(db);
  await sql`drop table summaries`.execute(db);
}
