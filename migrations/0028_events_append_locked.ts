import { type Kysely, sql } from 'kysely';

/**
 * The locked path of a fenced append (`EventStore.appendCatchingUp`) in one round trip: a VOLATILE
 * PL/pgSQL function that takes the stream's advisory lock (`p_lock_key`, the key `lockStream`
 * takes, transaction-scoped: held to the caller's commit) and then, in a statement of its own,
 * inserts `p_rows` at `p_version + 1...` when nothing came past `p_version` (and `p_version` is 0
 * or the tenant's row), else returns what came. The lock and the insert were two statements
 * because in READ COMMITTED a statement's snapshot is taken at its start, before the lock is
 * granted; inside a VOLATILE function each statement takes a fresh snapshot, so the insert sees
 * every append committed before the lock was granted.
 *
 * `p_rows`: a JSON array of `{ "type", "data", "metadata" }` in stream order. The rows returned:
 * one 'head' row (`at_tenant`: the tenant of the row at `p_version`, null: none), a 'written' row
 * per row inserted, a 'missed' row (the whole event) per row past `p_version`; ordered by part,
 * then stream version. SECURITY INVOKER (the default): it runs with the caller's privileges
 * (SELECT and INSERT on events for the app role), so it gives no role anything it did not have.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create function events_append_locked(p_lock_key bigint, p_tenant_id text, p_stream_id text, p_version integer, p_rows jsonb)
    returns table (
      part text, at_tenant text, global_position bigint, stream_version integer, recorded_at timestamptz,
      tenant_id text, stream_id text, type text, data jsonb, metadata jsonb
    )
    language plpgsql volatile security invoker as $$
    #variable_conflict use_column
    begin
      perform pg_advisory_xact_lock(p_lock_key);
      -- a statement after the lock: its snapshot holds every append committed before it was granted
      return query
        with at as materialized (
          select (select e.tenant_id from events e where e.stream_id = p_stream_id and e.stream_version = p_version) as tenant_id
        ), missed as materialized (
          select e.* from events e where e.stream_id = p_stream_id and e.stream_version > p_version
        ), ins as (
          insert into events (tenant_id, stream_id, stream_version, type, data, metadata)
          select p_tenant_id, p_stream_id, p_version + r.n::integer, r.item->>'type', r.item->'data', r.item->'metadata'
          from jsonb_array_elements(p_rows) with ordinality as r(item, n)
          where not exists (select 1 from missed) and (p_version = 0 or (select at.tenant_id from at) = p_tenant_id)
          returning events.global_position, events.stream_version, events.recorded_at
        )
        select 'head'::text, at.tenant_id, null::bigint, null::integer, null::timestamptz, null::text, null::text, null::text, null::jsonb, null::jsonb from at
        union all
        select 'written', null, ins.global_position, ins.stream_version, ins.recorded_at, null, null, null, null, null from ins
        union all
        select 'missed', null, m.global_position, m.stream_version, m.recorded_at, m.tenant_id, m.stream_id, m.type, m.data, m.metadata from missed m
        order by 1, 4;
    end $$`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop function events_append_locked(bigint, text, text, integer, jsonb)`.execute(db);
}
