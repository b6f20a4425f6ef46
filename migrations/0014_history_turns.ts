import { type Kysely, sql } from 'kysely';

/**
 * The number of committed turns per session, kept with its compaction watermark
 * (`history_watermarks.turns`), so that a turn's history read learns it in one row instead of
 * counting the session's messages (which grow with it). Existing sessions are counted once here.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table history_watermarks add column turns integer not null default 0`.execute(db);
  await sql`
    insert into history_watermarks (session_id, tenant_id, compacted_through, turns)
    select session_id, min(tenant_id), 0, count(distinct turn_id) from turn_messages group by session_id
    on conflict (session_id) do update set turns = excluded.turns`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table history_watermarks drop column turns`.execute(db);
}
