import { type Kysely, sql } from 'kysely';

/**
 * `worlds`: a tenant's worlds as they now are (inline, from `world.created@1`, `world.revised@1`
 * and `world.archived@1`; the world's stream id is its id). The current document is kept here for
 * reads; an earlier revision is read from the log (revision n = the stream's event n).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table worlds (
      world_id text primary key,
      tenant_id text not null,
      name text not null,
      revision integer not null,
      archived boolean not null default false,
      document jsonb not null,
      provenance jsonb not null,
      created_position bigint not null,
      created_at timestamptz not null,
      updated_at timestamptz not null
    )`.execute(db);
  // a tenant's list, in creation order (cursor pagination)
  await sql`create index worlds_tenant_created on worlds (tenant_id, created_position)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table worlds`.execute(db);
}
