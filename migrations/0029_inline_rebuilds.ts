import { type Kysely, sql } from 'kysely';

/**
 * A per-stream epoch of inline rebuilds, so a one-statement append (`insertAtVersion` with its
 * inline projections' writes as CTEs) can tell that an inline rebuild of its stream committed
 * between its snapshot and its lock. `rebuildInline` bumps the stream's row (`epoch + 1`, the
 * first rebuild inserts 1) in the transaction that deletes and re-folds its rows, under the
 * stream's lock. The append's statement compares the epoch its snapshot sees with
 * `inline_rebuild_epoch`, a VOLATILE PL/pgSQL function read after the lock: in READ COMMITTED each
 * statement of such a function takes a fresh snapshot, so it sees a rebuild committed before the
 * lock was granted. When the two differ the statement writes nothing and the append takes a
 * transaction whose statements each read after the lock. No row: epoch 0 (never rebuilt).
 * SECURITY INVOKER (the default): it reads with the caller's SELECT on `inline_rebuilds`.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('inline_rebuilds')
    .addColumn('stream_id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull())
    .addColumn('epoch', 'bigint', (c) => c.notNull())
    .execute();
  await sql`
    create function inline_rebuild_epoch(p_tenant_id text, p_stream_id text) returns bigint
    language plpgsql volatile security invoker as $$
    begin
      -- a statement of its own: its snapshot is taken now, after the caller's lock
      return coalesce((select r.epoch from inline_rebuilds r where r.stream_id = p_stream_id and r.tenant_id = p_tenant_id), 0);
    end $$`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop function inline_rebuild_epoch(text, text)`.execute(db);
  await db.schema.dropTable('inline_rebuilds').execute();
}
