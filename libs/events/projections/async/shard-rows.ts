import { type Kysely, type Selectable, sql, type Transaction } from 'kysely';
import { LOG_PARTITIONS, type LogCursor } from '../../event-store';
import type { Database, ProjectionShardsTable } from '../../schema';
import { precompiled } from '../../precompiled';

type Executor = Kysely<Database> | Transaction<Database>;

/** A `projection_shards` row as the projector uses it, with the database clock's verdicts. */
export interface ShardRow {
  projection: string;
  shard: number;
  cursor: LogCursor;
  owner: string | null;
  /** `lease_until` is in the future. */
  leaseLive: boolean;
  failing: boolean;
  /** A failing shard whose retry is due. */
  retryDue: boolean;
  /** The failed event's global position while failing. */
  failedPosition: number | null;
  /** Milliseconds left of the lease (0 when none or run out). */
  leaseLeftMs: number;
  /** Milliseconds until a failing shard's retry is due (0 when due or not failing). */
  retryLeftMs: number;
  /**
   * Whether the log holds an event after the cursor that a reader may see now (known only for rows
   * read by `readShards`; claimed rows say true).
   */
  hasWork: boolean;
  /**
   * Whether the partition holds a committed event after the cursor that may not be applied yet: an
   * older transaction still runs (it may append before it). No notification follows its end, so the
   * projector looks again soon (known only for rows read by `readShards`).
   */
  hasHeldWork: boolean;
}

// the database clock at the moment of the statement (a round's transaction may have begun long before)
const verdicts = sql<boolean>`coalesce(lease_until > clock_timestamp(), false)`.as('lease_live');
const due = sql<boolean>`coalesce(next_retry_at <= clock_timestamp(), true)`.as('retry_due');
const leaseLeft = sql<number>`greatest(0, coalesce(extract(epoch from (lease_until - clock_timestamp())) * 1000, 0))::float8`.as('lease_left_ms');
const retryLeft = sql<number>`greatest(0, coalesce(extract(epoch from (next_retry_at - clock_timestamp())) * 1000, 0))::float8`.as('retry_left_ms');

/**
 * The columns of a row the projector reads (`ShardRow`), not the whole row: a pass reads every row of
 * every async projection (16 partitions each), and the failure's text and times, which it never
 * looks at, were parsed for each (issue 33: `lease_until` and the like a `Date` per row and pass).
 */
const SHARD_COLUMNS = ['projection', 'shard', 'transaction_id', 'global_position', 'owner', 'failed_position'] as const;
const failing = sql<boolean>`failing_since is not null`.as('failing');

type ReadRow = Pick<Selectable<ProjectionShardsTable>, (typeof SHARD_COLUMNS)[number]> & {
  failing: boolean;
  lease_live: boolean;
  retry_due: boolean;
  lease_left_ms: number | string;
  retry_left_ms: number | string;
  has_work?: boolean;
  has_held_work?: boolean;
};

function toShardRow(r: ReadRow): ShardRow {
  return {
    projection: r.projection,
    shard: Number(r.shard),
    cursor: { transactionId: String(r.transaction_id), globalPosition: Number(r.global_position) },
    owner: r.owner,
    leaseLive: Boolean(r.lease_live),
    failing: Boolean(r.failing),
    retryDue: Boolean(r.retry_due),
    failedPosition: r.failed_position === null ? null : Number(r.failed_position),
    leaseLeftMs: Number(r.lease_left_ms),
    retryLeftMs: r.failing ? Number(r.retry_left_ms) : 0,
    hasWork: r.has_work ?? true,
    hasHeldWork: r.has_held_work ?? false,
  };
}

/** One row per projection and partition, at the start of the log (existing rows are left alone). */
export async function ensureShards(db: Executor, names: readonly string[]): Promise<void> {
  if (names.length === 0) return;
  const values = names.flatMap((projection) => Array.from({ length: LOG_PARTITIONS }, (_, shard) => ({ projection, shard })));
  await db
    .insertInto('projection_shards')
    .values(values)
    .onConflict((oc) => oc.columns(['projection', 'shard']).doNothing())
    .execute();
}

/**
 * The rows of these projections, each with whether its partition holds an event after its cursor
 * that a reader may see now, and whether it holds one that may not be applied yet (two index probes
 * per row: an idle pass costs this one query).
 */
export async function readShards(db: Executor, names: readonly string[]): Promise<ShardRow[]> {
  if (names.length === 0) return [];
  const { rows } = await readShardsQuery(db, { names: [...names] });
  return rows.map(toShardRow);
}

const after = (visible: 'visible' | 'held') => sql<boolean>`exists (
    select 1 from events e
    where e.log_partition = projection_shards.shard
      and (e.transaction_id, e.global_position) > (projection_shards.transaction_id, projection_shards.global_position)
      and ${visible === 'visible' ? sql`e.transaction_id < pg_snapshot_xmin(pg_current_snapshot())` : sql`e.transaction_id >= pg_snapshot_xmin(pg_current_snapshot())`})`;

/**
 * `readShards`' statement, compiled once (`precompiled`): every pass of the projector sends it (an
 * idle one nothing else), and its text is the same for any set of projections (an array parameter).
 */
const readShardsQuery = precompiled<Database, { names: string[] }, ReadRow>(['names'], (db, p) =>
  db
    .selectFrom('projection_shards')
    .select([...SHARD_COLUMNS, failing, verdicts, due, leaseLeft, retryLeft, after('visible').as('has_work'), after('held').as('has_held_work')])
    .where(sql<boolean>`projection = any(${p.names}::text[])`)
    .orderBy('projection')
    .orderBy('shard'),
);

/** A row's recorded failure cleared (its event applied, or its cursor reset). */
const NO_FAILURE = {
  failing_since: null,
  attempts: 0,
  last_error: null,
  error_code: null,
  failed_position: null,
  failed_event_type: null,
  next_retry_at: null,
} as const;

// clock_timestamp, not now(): now() is the transaction's start, and a long shared round granted
// at its start would hand out leases already partly spent when it commits
const leaseEnd = (leaseMs: number) => sql<Date>`clock_timestamp() + ${leaseMs} * interval '1 millisecond'`;

/**
 * Takes the rows of these partitions that are free, already ours, or whose lease ran out (the
 * try-lock), renewing the lease; with `from`, takes that owner's rows whatever their lease (a
 * rebalance: the owner's next compare-and-set fails, so nothing is applied twice). Returns the
 * rows now held.
 */
export async function claimShards(
  db: Executor,
  request: { names: readonly string[]; shards: readonly number[]; owner: string; leaseMs: number; from?: string },
): Promise<ShardRow[]> {
  if (request.names.length === 0 || request.shards.length === 0) return [];
  const rows = await db
    .updateTable('projection_shards')
    .set({ owner: request.owner, lease_until: leaseEnd(request.leaseMs) })
    .where('projection', 'in', request.names)
    .where('shard', 'in', request.shards)
    .where((eb) =>
      request.from !== undefined
        ? eb('owner', '=', request.from)
        : eb.or([eb('owner', 'is', null), eb('owner', '=', request.owner), eb('lease_until', '<', sql<Date>`now()`)]),
    )
    .returning([...SHARD_COLUMNS, failing, verdicts, due, leaseLeft, retryLeft])
    .execute();
  return rows.map(toShardRow).sort((a, b) => a.shard - b.shard || a.projection.localeCompare(b.projection));
}

/** Every row of these projections, whoever holds it (a replay takes its projection whole). */
export async function takeProjection(db: Executor, request: { name: string; owner: string; leaseMs: number }): Promise<number> {
  const result = await db
    .updateTable('projection_shards')
    .set({ owner: request.owner, lease_until: leaseEnd(request.leaseMs) })
    .where('projection', '=', request.name)
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/** Renews the lease of the rows the owner still holds (of these projections). */
export async function renewLeases(db: Executor, request: { names: readonly string[]; owner: string; leaseMs: number }): Promise<void> {
  if (request.names.length === 0) return;
  await db
    .updateTable('projection_shards')
    .set({ lease_until: leaseEnd(request.leaseMs) })
    .where('projection', 'in', request.names)
    .where('owner', '=', request.owner)
    .execute();
}

/** Gives rows back (all of the owner's, or only these partitions / projections). */
export async function releaseShards(db: Executor, request: { owner: string; names?: readonly string[]; shards?: readonly number[] }): Promise<void> {
  if (request.names?.length === 0 || request.shards?.length === 0) return;
  await db
    .updateTable('projection_shards')
    .set({ owner: null, lease_until: null })
    .where('owner', '=', request.owner)
    .$if(request.names !== undefined, (q) => q.where('projection', 'in', request.names!))
    .$if(request.shards !== undefined, (q) => q.where('shard', 'in', request.shards!))
    .execute();
}

/**
 * Moves the cursor from `from` to `to` by compare-and-set, renews the lease and clears a recorded
 * failure (the events up to `to` applied). False: the row is not at `from` or not ours any more
 * (the shard was lost): the caller rolls back.
 */
export async function advanceCursor(
  trx: Executor,
  request: { projection: string; shard: number; owner: string; from: LogCursor; to: LogCursor; leaseMs: number },
): Promise<boolean> {
  const { projection, ...rest } = request;
  return (await advanceCursors(trx, { ...rest, projections: [projection] })) === 1;
}

/**
 * `advanceCursor` for several projections of one shard at the same cursor, in one statement.
 * Returns the rows moved: fewer than the projections when one is not at `from` or not ours any more.
 */
export async function advanceCursors(
  trx: Executor,
  request: { projections: readonly string[]; shard: number; owner: string; from: LogCursor; to: LogCursor; leaseMs: number },
): Promise<number> {
  const { projections, shard, from, to, owner, leaseMs } = request;
  return advanceShardCursors(trx, { owner, leaseMs, moves: [{ projections, shard, from, to }] });
}

/** Puts the cursors of the owner's rows of a projection back at `to` and clears their failures; returns the rows changed. */
export async function resetCursors(trx: Executor, request: { name: string; owner: string; to: LogCursor }): Promise<number> {
  const result = await trx
    .updateTable('projection_shards')
    .set({
      transaction_id: request.to.transactionId,
      global_position: String(request.to.globalPosition),
      ...NO_FAILURE,
    })
    .where('projection', '=', request.name)
    .where('owner', '=', request.owner)
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/**
 * Records that the shard stopped at an event (its cursor stays before it): attempts + 1, the next
 * retry after `retryDelayMs × 2^(attempts − 1)`, at most `maxRetryDelayMs`. Returns the attempts
 * so far, or null when the row is not ours any more.
 */
export async function recordFailure(
  db: Executor,
  request: {
    projection: string;
    shard: number;
    owner: string;
    globalPosition: number;
    eventType: string;
    error: string;
    errorCode: string;
    retryDelayMs: number;
    maxRetryDelayMs: number;
  },
): Promise<number | null> {
  const row = await db
    .updateTable('projection_shards')
    .set((eb) => ({
      failing_since: sql<Date>`coalesce(failing_since, now())`,
      attempts: eb('attempts', '+', 1),
      last_error: request.error,
      error_code: request.errorCode,
      failed_position: String(request.globalPosition),
      failed_event_type: request.eventType,
      next_retry_at: sql<Date>`now() + least(${request.maxRetryDelayMs}::float8, ${request.retryDelayMs}::float8 * power(2, least(attempts, 30))) * interval '1 millisecond'`,
    }))
    .where('projection', '=', request.projection)
    .where('shard', '=', request.shard)
    .where('owner', '=', request.owner)
    .returning('attempts')
    .executeTakeFirst();
  return row ? row.attempts : null;
}

/** One shard's move for `advanceShardCursors`: these projections' rows from `from` to `to`. */
export interface CursorMove {
  projections: readonly string[];
  shard: number;
  from: LogCursor;
  to: LogCursor;
}

/**
 * `advanceCursors` for several shards at once, in one statement (a pass's shared transaction).
 * Returns the rows moved: fewer than the moves' projections when one is not at its `from` or not
 * ours any more.
 */
export async function advanceShardCursors(trx: Executor, request: { owner: string; leaseMs: number; moves: readonly CursorMove[] }): Promise<number> {
  const rows = request.moves.flatMap((m) => m.projections.map((projection) => ({ projection, ...m })));
  if (rows.length === 0) return 0;
  const result = await moveShardCursors(trx, {
    projections: rows.map((r) => r.projection),
    shards: rows.map((r) => r.shard),
    fromTransactions: rows.map((r) => r.from.transactionId),
    fromPositions: rows.map((r) => String(r.from.globalPosition)),
    toTransactions: rows.map((r) => r.to.transactionId),
    toPositions: rows.map((r) => String(r.to.globalPosition)),
    owner: request.owner,
    leaseMs: request.leaseMs,
  });
  return Number(result.numAffectedRows ?? 0);
}

/**
 * `advanceShardCursors`' statement, compiled once (`precompiled`): the projector runs it with every
 * batch it applies (issue 33: kysely's build of a 10-column update per batch). The moves are
 * parallel array parameters, one row each (`unnest`), so the text is the same for any number.
 */
const moveShardCursors = precompiled<
  Database,
  {
    projections: string[];
    shards: number[];
    fromTransactions: string[];
    fromPositions: string[];
    toTransactions: string[];
    toPositions: string[];
    owner: string;
    leaseMs: number;
  }
>(['projections', 'shards', 'fromTransactions', 'fromPositions', 'toTransactions', 'toPositions', 'owner', 'leaseMs'], (db, p) =>
  db
    .updateTable('projection_shards')
    .from(
      sql`(select * from unnest(${p.projections}::text[], ${p.shards}::int[], ${p.fromTransactions}::xid8[], ${p.fromPositions}::bigint[], ${p.toTransactions}::xid8[], ${p.toPositions}::bigint[])
        as t(projection, shard, from_transaction, from_position, to_transaction, to_position))`.as('m'),
    )
    .set({
      transaction_id: sql`m.to_transaction`,
      global_position: sql`m.to_position`,
      lease_until: leaseEnd(p.leaseMs),
      ...NO_FAILURE,
    })
    .where(
      sql<boolean>`projection_shards.projection = m.projection and projection_shards.shard = m.shard
        and projection_shards.transaction_id = m.from_transaction and projection_shards.global_position = m.from_position`,
    )
    .where('projection_shards.owner', '=', p.owner),
);
