import { type Kysely, sql } from 'kysely';

/**
 * Global order without a global append lock (the way Emmett reads a PostgreSQL log): each event
 * records the id of the transaction that appended it, and a reader only sees events whose
 * transaction is below the oldest one still running (`pg_snapshot_xmin(pg_current_snapshot())`),
 * ordered by (transaction_id, global_position): no event can later appear behind its cursor.
 *
 * `log_partition` splits the log by stream (16 partitions, a hash of the stream id) so async
 * projections can be run in shards that several processes share; each partition is read in the
 * same order through its own index.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  // existing rows get this migration's transaction id: all below every later append
  await sql`alter table events add column transaction_id xid8 not null default pg_current_xact_id()`.execute(db);
  await sql`alter table events add column log_partition smallint not null generated always as ((hashtext(stream_id) & 15)::smallint) stored`.execute(db);
  await sql`create index events_transaction_order on events (transaction_id, global_position)`.execute(db);
  await sql`create index events_partition_order on events (log_partition, transaction_id, global_position)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index events_partition_order`.execute(db);
  await sql`drop index events_transaction_order`.execute(db);
  await sql`alter table events drop column log_partition`.execute(db);
  await sql`alter table events drop column transaction_id`.execute(db);
}
