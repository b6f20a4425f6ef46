import { type Kysely, sql } from 'kysely';

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
  // compaction covers a continuous prefix: reads take the uncompacted tail as `ord > compacted_through`
  // over the (session_id, ord) index, so no marker update ever sits in their path
  await sql`
    create table history_watermarks (
      session_id text primary key,
      tenant_id text not null,
      compacted_through integer not null
    )`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table history_watermarks`.execute(db);
  await sql`drop table summaries`.execute(db);
}
