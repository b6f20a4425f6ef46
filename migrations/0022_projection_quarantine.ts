import { type Kysely, sql } from 'kysely';

/**
 * `projection_quarantine`: events an async projection skipped after failing to apply them
 * `COVEL_PROJECTION_QUARANTINE_AFTER` times in a row (the shard then goes on with the next event).
 * One row per projection and event; the operator sees every row (`GET /admin/quarantine`,
 * `npm run quarantine`), a tenant only the fact that a view of its own session misses an event.
 *
 * - `error` may quote tenant data (operators only); `error_code` does not;
 * - `acknowledged_at` / `acknowledged_by`: the operator has seen it (`/health` is degraded until then);
 * - `resolved_at`: a replay of the projection applied the event after all (the view is whole again).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table projection_quarantine (
      id bigint generated always as identity primary key,
      projection text not null,
      shard smallint not null,
      global_position bigint not null,
      transaction_id xid8 not null,
      event_type text not null,
      tenant_id text not null,
      stream_id text not null,
      error_code text not null,
      error text not null,
      attempts integer not null,
      quarantined_at timestamptz not null default now(),
      acknowledged_at timestamptz,
      acknowledged_by text,
      resolved_at timestamptz,
      unique (projection, global_position)
    )`.execute(db);
  // what a view asks: does this session have an unresolved skipped event in this projection
  await sql`create index projection_quarantine_stream on projection_quarantine (tenant_id, stream_id, projection) where resolved_at is null`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table projection_quarantine`.execute(db);
}
