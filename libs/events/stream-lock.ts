import { sql, type Transaction } from 'kysely';
import type { Database } from './schema';

/** Seed of the stream lock's key: keeps its key space apart from other advisory locks. */
const STREAM_LOCK_SEED = 7_411_002;

/**
 * Takes the stream's transaction-scoped advisory lock (a 64-bit hash of the stream id). Appends to
 * one stream are serialized by it, and an inline rebuild of the stream holds it to keep them out;
 * appends to different streams never wait for each other (a hash collision only serializes two
 * streams, it never breaks anything: the version check and the unique index still decide).
 */
/** Takes the stream's lock (as `lockStream`) and reads the stream's head in the same statement. */
export async function lockStreamAndReadHead(trx: Transaction<Database>, streamId: string): Promise<{ version: number; tenantId: string | null }> {
  const { rows } = await sql<{ version: number | null; tenant_id: string | null }>`
    select h.stream_version as version, h.tenant_id
    from (select pg_advisory_xact_lock(hashtextextended(${streamId}, ${STREAM_LOCK_SEED}))) l
    left join lateral (
      select stream_version, tenant_id from events where stream_id = ${streamId} order by stream_version desc limit 1
    ) h on true`.execute(trx);
  return { version: rows[0]?.version ?? 0, tenantId: rows[0]?.tenant_id ?? null };
}

export async function lockStream(trx: Transaction<Database>, streamId: string): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtextextended(${streamId}, ${STREAM_LOCK_SEED}))`.execute(trx);
}
