import { type Kysely, sql } from 'kysely';

/**
 * `projection_shards`: where each async projection (trace_events, prefix_reports, ...) stands in
 * each partition of the log (migration 0008: `events.log_partition`), who works it, and whether it
 * is stopped at an event.
 *
 * - the cursor `(transaction_id, global_position)` is the last event applied, in the log's read
 *   order; it moves by compare-and-set in the same transaction as the rows it covers;
 * - `owner` + `lease_until`: one process at a time works a shard (taken when free, its own, or the
 *   lease ran out; the lease is renewed with each batch);
 * - the failure fields describe the event the shard is stopped at; every other shard goes on.
 *
 * Rows are created by the projector (one per projection and partition, at the start of the log).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table projection_shards (
      projection text not null,
      shard smallint not null check (shard >= 0 and shard < 16),
      transaction_id xid8 not null default '0'::xid8,
      global_position bigint not null default 0,
      owner text,
      lease_until timestamptz,
      failing_since timestamptz,
      attempts integer not null default 0,
      last_error text,
      error_code text,
      failed_position bigint,
      failed_event_type text,
      next_retry_at timestamptz,
      primary key (projection, shard)
    )`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table projection_shards`.execute(db);
}
