import { type Kysely, sql } from 'kysely';

/** The append-only event log: one table, never updated or deleted (a trigger enforces it). */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table events (
      global_position bigint generated always as identity primary key,
      tenant_id text not null,
      stream_id text not null,
      stream_version integer not null check (stream_version > 0),
      type text not null,
      data jsonb not null,
      metadata jsonb not null default '{}'::jsonb,
      recorded_at timestamptz not null default now(),
      constraint events_stream_version_unique unique (stream_id, stream_version)
    )`.execute(db);
  await sql`create index events_tenant_stream on events (tenant_id, stream_id)`.execute(db);
  await sql`
    create function events_reject_change() returns trigger language plpgsql as $$
    begin
      raise exception 'events is append-only: % is not allowed', tg_op using errcode = 'P0001';
    end $$`.execute(db);
  await sql`
    create trigger events_append_only before update or delete on events
    for each row execute function events_reject_change()`.execute(db);
  await sql`
    create trigger events_no_truncate before truncate on events
    for each statement execute function events_reject_change()`.execute(db);
}

export async function down(): Promise<void> {
  throw new Error('the event log is never dropped by a migration');
}
