import { type Kysely, sql } from 'kysely';

/** Tenants and their hashed API keys (configuration, not part of the event log). */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table tenants (
      id text primary key,
      name text not null,
      api_key_hash text not null unique,
      created_at timestamptz not null default now()
    )`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table tenants`.execute(db);
}
