import { type Kysely, type Selectable, type Transaction, sql } from 'kysely';
import type { Database, ProjectionShardsTable } from '../../schema';
import { type QuarantinedEvent, QuarantineRecords } from './quarantine';
import type { AsyncProjectionStatus, ShardStatus } from './types';

/** A shard's lag is counted up to this many events (through the partition index), so status() stays cheap. */
export const LAG_COUNT_LIMIT = 10_000;

/** The status lists at most this many open quarantined events per projection, the newest (`quarantinedOpen` counts them all). */
export const QUARANTINE_STATUS_LIMIT = 20;

type Row = Selectable<ProjectionShardsTable> & { lag: string | number; total: string | number; open: string | number };

const iso = (d: Date | string | null) => (d === null ? null : new Date(d).toISOString());

/**
 * Per projection, in the order given: every shard's cursor, owner, lag and failure, and its open
 * quarantined events (the newest `QUARANTINE_STATUS_LIMIT`, and their count). One snapshot: a
 * quarantine commits its record and clears its shard's failure together, and the status never shows
 * one without the other. The usual status, nothing open in quarantine, is one statement (the rows,
 * their lag and the quarantine counts; issue 33: a transaction of 3 + one read per projection before,
 * on every scrape of /metrics); with an open record, the rows, the counts and the records are read in
 * one read-only REPEATABLE READ transaction.
 */
export async function readStatus(db: Kysely<Database>, names: readonly string[]): Promise<AsyncProjectionStatus[]> {
  if (names.length === 0) return [];
  const rows = await readRows(db, names);
  if (!rows.some((r) => Number(r.open) > 0))
    return toStatuses(
      names,
      rows,
      names.map(() => []),
    );
  return db
    .transaction()
    .setIsolationLevel('repeatable read')
    .setAccessMode('read only')
    .execute(async (trx) => {
      const inSnapshot = await readRows(trx, names);
      const records = new QuarantineRecords(trx);
      // one after another: the statements of a transaction share its connection; only the projections with open records
      const open: QuarantinedEvent[][] = [];
      for (const name of names) {
        const any = inSnapshot.some((r) => r.projection === name && Number(r.open) > 0);
        open.push(any ? await records.list({ state: 'open', projections: [name], limit: QUARANTINE_STATUS_LIMIT }) : []);
      }
      return toStatuses(names, inSnapshot, open);
    });
}

/** The shard rows with their lag and their projection's quarantine counts (`total`, `open`), one statement. */
async function readRows(db: Kysely<Database> | Transaction<Database>, names: readonly string[]): Promise<Row[]> {
  const { rows } = await sql<Row>`
    select s.*, (
      select count(*) from (
        select 1 from events e
        where e.log_partition = s.shard
          and (e.transaction_id, e.global_position) > (s.transaction_id, s.global_position)
        limit ${LAG_COUNT_LIMIT}
      ) pending
    ) as lag, coalesce(q.total, 0) as total, coalesce(q.open, 0) as open
    from projection_shards s
    left join (
      select projection, count(*)::int as total, (count(*) filter (where acknowledged_at is null and resolved_at is null))::int as open
      from projection_quarantine where projection in (${sql.join(names)}) group by projection
    ) q on q.projection = s.projection
    where s.projection in (${sql.join(names)})
    order by s.projection, s.shard`.execute(db);
  return rows;
}

function toStatuses(names: readonly string[], rows: readonly Row[], open: readonly QuarantinedEvent[][]): AsyncProjectionStatus[] {
  return names.map((name, i) => {
    const mine = rows.filter((r) => r.projection === name);
    const shards = mine.map(toShardStatus);
    const failing = shards.filter((s) => s.state === 'failing').length;
    return {
      name,
      state: failing > 0 ? 'failing' : 'running',
      lag: shards.reduce((n, s) => n + s.lag, 0),
      failing,
      shards,
      quarantined: open[i],
      quarantinedOpen: Number(mine[0]?.open ?? 0),
      quarantinedTotal: Number(mine[0]?.total ?? 0),
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
