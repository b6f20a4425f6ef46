import { type Kysely, sql } from 'kysely';

/**
 * Plugin data (spec §4 "io.selfData"), an inline projection of `plugin-data.written@1` /
 * `plugin-data.deleted@1`: one row per (session, plugin, namespace, key). `created_position` is the
 * stream version of the write that created the row (creation order), `updated_position` that of its
 * latest write (recency); both are unique within a session, so either order has no ties.
 *
 * `plugin_data_namespaces` holds each namespace's row count, kept by the same projection.
 *
 * The bounded selfData read takes the namespace's earliest rows through `plugin_data_created` and
 * its most recently updated ones through `plugin_data_updated` (a backward range scan), and its
 * total from `plugin_data_namespaces` (one key): it never reads the namespace whole, not even its
 * index (a count(*) of a large namespace would; PostgreSQL may even choose a sequential scan).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table plugin_data (
      tenant_id text not null,
      session_id text not null,
      plugin_id text not null,
      namespace text not null,
      key text not null,
      value jsonb not null,
      created_position integer not null,
      updated_position integer not null,
      primary key (session_id, plugin_id, namespace, key)
    )`.execute(db);
  await sql`
    create table plugin_data_namespaces (
      tenant_id text not null,
      session_id text not null,
      plugin_id text not null,
      namespace text not null,
      row_count integer not null,
      primary key (session_id, plugin_id, namespace)
    )`.execute(db);
  await sql`create index plugin_data_created on plugin_data (session_id, plugin_id, namespace, created_position) include (tenant_id)`.execute(db);
  await sql`create index plugin_data_updated on plugin_data (session_id, plugin_id, namespace, updated_position) include (tenant_id)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table plugin_data_namespaces, plugin_data`.execute(db);
}
