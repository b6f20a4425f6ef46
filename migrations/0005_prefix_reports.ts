import { type Kysely, sql } from 'kysely';

/** `prefix_reports`: per model call, the shared prefix with the previous turn's first request. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table prefix_reports (
      call_id text primary key,
      tenant_id text not null,
      session_id text not null,
      turn_id text not null,
      turn integer not null,
      runtime text not null,
      position bigint not null,
      first_in_turn boolean not null,
      protocol text not null,
      body text not null,
      layout jsonb,
      request_tokens integer not null,
      shared_tokens integer,
      shared_percent real,
      first_difference jsonb,
      provider_cached_tokens integer,
      provider_input_tokens integer
    )`.execute(db);
  await sql`create index prefix_reports_session on prefix_reports (session_id, position)`.execute(db);
  await sql`create index prefix_reports_runtime_first on prefix_reports (session_id, runtime, position) where first_in_turn`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table prefix_reports`.execute(db);
}
