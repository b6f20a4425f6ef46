import { type Kysely, type Selectable, type Transaction, sql } from 'kysely';
import type { Database, ProjectionShardsTable } from '../../schema';
import { type QuarantinedEvent, QuarantineRecords } from './quarantine';
import type { AsyncProjectionStatus, ShardStatus } from './types';

/** A shard's lag is counted up to this many events (through the partition index), so status() stays cheap. */
export const LAG_COUNT_LIMIT = 10_000;

/** The status lists at most this many open quarantined events per projection, the newest (`quarantinedOpen` counts them all). */
export const QUARANTINE_STATUS_LIMIT = 20;

type Row = Selectable<ProjectionShardsTable> & { lag: string | number };

const iso = (d: Date | string | null) => (d === null ? null : new Date(d).toISOString());

/**
 * Per projection, in the order given: every shard's cursor, owner, lag and failure, and its open
 * quarantined events (the newest `QUARANTINE_STATUS_LIMIT`, and their count). One snapshot (a
 * read-only REPEATABLE READ transaction): a quarantine commits its record and clears its shard's
 * failure together, and the status never shows one without the other.
 */
export async function readStatus(db: Kysely<Database>, names: readonly string[]): Promise<AsyncProjectionStatus[]> {
  if (names.length === 0) return [];
  return db
    .transaction()
    .setIsolationLevel('repeatable read')
    .setAccessMode('read only')
    .execute((trx) => readInSnapshot(trx, names));
}

async function readInSnapshot(db: Transaction<Database>, names: readonly string[]): Promise<AsyncProjectionStatus[]> {
  const { rows } = await sql<Row>`
    select s.*, (
      select count(*) from (
        select 1 from events e
        where e.log_partition = s.shard
          and (e.transaction_id, e.global_position) > (s.transaction_id, s.global_position)
        limit ${LAG_COUNT_LIMIT}
      ) pending
    ) as lag
    from projection_shards s
    where s.projection in (${sql.join(names)})
    order by s.projection, s.shard`.execute(db);
  const records = new QuarantineRecords(db);
  // one after another: the statements of a transaction share its connection
  const open: QuarantinedEvent[][] = [];
  for (const name of names) open.push(await records.list({ state: 'open', projections: [name], limit: QUARANTINE_STATUS_LIMIT }));
  const counts = await records.counts();
  return names.map((name, i) => {
    const shards = rows.filter((r) => r.projection === name).map(toShardStatus);
    const failing = shards.filter((s) => s.state === 'failing').length;
    return {
      name,
      state: failing > 0 ? 'failing' : 'running',
      lag: shards.reduce((n, s) => n + s.lag, 0),
      failing,
      shards,
      quarantined: open[i],
      quarantinedOpen: counts.get(name)?.open ?? 0,
      quarantinedTotal: counts.get(name)?.total ?? 0,
    };
  });
}

function toShardStatus(r: Row): ShardStatus {
  const failing = r.failing_since !== null;
  return {
    shard: Number(r.shard),
    cursor: { transactionId: String(r.transaction_id), globalPosition: Number(r.global_position) },
    owner: r.owner,
    leaseUntil: iso(r.lease_until),
    lag: Number(r.lag),
    state: failing ? 'failing' : 'running',
    failure: failing
      ? {
          globalPosition: Number(r.failed_position),
          eventType: r.failed_event_type ?? '',
          errorCode: r.error_code ?? 'UNKNOWN',
          error: r.last_error ?? '',
          attempts: r.attempts,
          since: iso(r.failing_since)!,
          nextRetryAt: iso(r.next_retry_at),
        }
      : null,
  };
}
