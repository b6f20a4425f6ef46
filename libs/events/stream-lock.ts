import { type CompiledQuery, type Kysely, type RawBuilder, sql, type Transaction } from 'kysely';
import { quotedIdentifier, rawFragmentText, textStatement } from './sql-text';
import type { Database } from './schema';
import type { toStoredEvent } from './stored-event';

/** Seed of the stream lock's key: keeps its key space apart from other advisory locks. */
const STREAM_LOCK_SEED = 7_411_002;

/**
 * Takes the stream's transaction-scoped advisory lock (a 64-bit hash of the stream id). Appends to
 * one stream are serialized by it, and an inline rebuild of the stream holds it to keep them out;
 * appends to different streams never wait for each other (a hash collision only serializes two
 * streams, it never breaks anything: the version check and the unique index still decide).
 */
export async function lockStream(trx: Transaction<Database>, streamId: string): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtextextended(${streamId}, ${STREAM_LOCK_SEED}))`.execute(trx);
}

/** One row of an append, as `insertAtVersion` writes it. */
export interface AppendRow {
  type: string;
  /** JSON text of the event's data and metadata. */
  data: string;
  metadata: string;
}

/** What `insertAtVersion` found and wrote. */
export interface InsertAtVersion {
  /**
   * Whether the statement holds the stream's lock (to the end of its transaction): always when it
   * waits for it; with `lock: 'try'`, only when no other transaction held it (else nothing is read
   * or written: head 0 and null, no rows).
   */
  locked: boolean;
  /** The stream's head as read under the lock (0 and null: the stream does not exist yet). */
  head: { version: number; tenantId: string | null };
  /** The rows written, in stream order; none when the head was not the expected one (or not the tenant's). */
  rows: { global_position: string; stream_version: number; recorded_at: Date | string }[];
  /** With `earliestPending`: the session's earliest execution queued or running before these rows (the `executions` view), null: none. */
  earliestPending?: string | null;
  /**
   * With `writes`: an inline rebuild of the stream committed between the statement's snapshot and
   * its lock, so nothing was written (no rows) though the head may have been the expected one; the
   * caller appends in a transaction whose statements read after the lock. False without `writes`.
   */
  stale: boolean;
}

/**
 * An append's lock, check and insert in one statement (one round trip; a transaction of its own when
 * `executor` is not one): takes the stream's lock (as `lockStream`), reads the stream's head, and
 * inserts `rows` at `expectedVersion + 1...` only when the head is `expectedVersion` and the stream
 * is new or the tenant's (`expectedVersion` null: after the head of a stream that exists and is the
 * tenant's). The head is read with the statement's snapshot, which may predate the
 * lock: an append that committed in between makes the insert fail on the unique
 * (stream_id, stream_version) index, so a stale head never lets two appends take one version.
 * With `earliestPending`, the same statement reads the stream's (a session's) earliest pending
 * execution (`ReadModels.earliestPendingExecution`, tenant-scoped): the snapshot holds every append
 * to the stream before the lock when the insert succeeds (see above), and the `executions` view is
 * written only in those appends' transactions (inline), so it is what a read after the lock sees.
 * `lock: 'try'` does not wait: when another transaction holds the lock the statement reads and
 * writes nothing (`locked` false), and whatever it does write is still written under the lock.
 */
export async function insertAtVersion(
  executor: Kysely<Database> | Transaction<Database>,
  /** `expectedVersion` null: at the head of a stream that exists (whatever its version). */
  request: {
    tenantId: string;
    streamId: string;
    expectedVersion: number | null;
    rows: readonly AppendRow[];
    earliestPending?: boolean;
    lock?: 'wait' | 'try';
    /**
     * More data-modifying CTEs of the statement, after the insert (an append's inline projection
     * writes, `inlineStatement`): each reads its event's row with `insertedRow`, so it writes only
     * when the insert does. They share the statement's snapshot (see above: when the insert writes,
     * it holds every earlier append of the stream), and a failure of one fails the statement whole.
     * Not held by that snapshot: an inline rebuild of the stream (`rebuildInline`: under the lock,
     * no append) that committed between the snapshot and the lock (an update of a row it wrote
     * again would find its old version deleted and write nothing). So with `writes` the statement
     * reads the stream's rebuild epoch (`inline_rebuilds`, migration 0029) in its snapshot and,
     * after the lock, in a fresh one (`inline_rebuild_epoch`, VOLATILE); when they differ it writes
     * nothing and says so (`stale`).
     */
    writes?: readonly { name: string; body: RawBuilder<unknown> }[];
  },
): Promise<InsertAtVersion> {
  const statement = insertAtVersionStatement(executor, request);
  const { rows } = await executor.executeQuery<InsertAtVersionRow>(statement);
  const [first] = rows;
  return {
    locked: first.locked,
    head: { version: Number(first.head_version), tenantId: first.head_tenant },
    rows: rows
      .filter((r) => r.stream_version !== null)
      .map((r) => ({ global_position: String(r.global_position), stream_version: r.stream_version!, recorded_at: r.recorded_at! })),
    ...(request.earliestPending ? { earliestPending: first.earliest_pending } : {}),
    stale: first.stale,
  };
}

/** What `insertAtVersion`'s statement returns: one row per row inserted, or one row with nulls when none is. */
interface InsertAtVersionRow {
  locked: boolean;
  head_version: number;
  head_tenant: string | null;
  earliest_pending: string | null;
  stale: boolean;
  global_position: string | null;
  stream_version: number | null;
  recorded_at: Date | string | null;
}

/**
 * `insertAtVersion`'s statement, its text written here with numbered parameters rather than built
 * with kysely's `sql` and compiled on each append (issue 33: two appends a turn, a dozen fragments
 * and some twenty parameters each, built and walked every time). Only the `writes` (the inline
 * projections' CTEs, different for each append) are compiled by kysely, alone: their parameters come
 * first ($1...), the statement's own follow them, each value sent once however often the text uses
 * it. The executor's plugins see the statement as `textStatement` shows it to them.
 */
function insertAtVersionStatement(
  executor: Kysely<Database> | Transaction<Database>,
  request: Parameters<typeof insertAtVersion>[1],
): CompiledQuery<InsertAtVersionRow> {
  const parameters: unknown[] = [];
  const writes = request.writes?.length ? writesText(executor, request.writes, parameters) : undefined;
  const param = (value: unknown) => `$${parameters.push(value)}`;
  const tenant = param(request.tenantId);
  const stream = param(request.streamId);
  const expected = param(request.expectedVersion);
  const key = `hashtextextended(${stream}::text, ${param(STREAM_LOCK_SEED)})`;
  const pending = request.earliestPending
    ? `(select execution_id from executions where session_id = ${stream}::text and tenant_id = ${tenant}::text
        and status in ('queued', 'running') order by submitted_version limit 1)`
    : 'null::text';
  // waiting, the lock is held once `l` is read; trying, only when `l.locked` says so
  const [lock, locked] = request.lock === 'try' ? [`pg_try_advisory_xact_lock(${key})`, 'l.locked'] : [`pg_advisory_xact_lock(${key})`, 'true'];
  // with writes, the guard: the stream's rebuild epoch as the snapshot sees it and as read after the
  // lock (the function's own snapshot; evaluated per row of `h`, so once `l` took the lock)
  const [guard, fresh, stale] = writes
    ? [
        `, g as materialized (
      select coalesce((select r.epoch from inline_rebuilds r where r.stream_id = ${stream}::text and r.tenant_id = ${tenant}::text), 0)
        = inline_rebuild_epoch(${tenant}::text, ${stream}::text) as fresh
      from h where h.locked
    )`,
        'and (select g.fresh from g)',
        'not coalesce((select g.fresh from g), true)',
      ]
    : ['', '', 'false'];
  const values = request.rows.map((r, i) => `(${i + 1}::int, ${param(r.type)}::text, ${param(r.data)}::jsonb, ${param(r.metadata)}::jsonb)`).join(', ');
  const text = `
    with l as materialized (
      select ${lock} as locked
    ), h as materialized (
      select ${locked} as locked, coalesce(last.stream_version, 0) as version, last.tenant_id
      from l left join lateral (
        select stream_version, tenant_id from events where stream_id = ${stream}::text order by stream_version desc limit 1
      ) last on ${locked}
    )${guard}, ins as (
      insert into events (tenant_id, stream_id, stream_version, type, data, metadata)
      select ${tenant}::text, ${stream}::text, h.version + v.n, v.type, v.data, v.metadata
      from h, (values ${values}) as v(n, type, data, metadata)
      where h.locked
        and (h.version = ${expected}::int or (${expected}::int is null and h.version > 0))
        and (h.tenant_id is null or h.tenant_id = ${tenant}::text)
        ${fresh}
      returning global_position, stream_version, recorded_at
    )${writes?.sql ?? ''}
    select h.locked, h.version as head_version, h.tenant_id as head_tenant, ${pending} as earliest_pending, ${stale} as stale, ins.global_position, ins.stream_version, ins.recorded_at
    from h left join ins on true
    order by ins.stream_version`;
  return textStatement<InsertAtVersionRow, Database>(executor, text, parameters);
}

/**
 * The CTEs of `writes` (`, "name" as (body)` each) as SQL text, their values pushed onto
 * `parameters` (empty: they come first). Written by `rawFragmentText` (issue 33: kysely's compiler
 * walked every append's writes); a write holding a node it does not write is compiled by kysely
 * (without the executor's plugins: they see the whole statement once, `textStatement`). The same
 * text and parameters either way (a test compares them).
 */
export function writesText(
  executor: Kysely<Database> | Transaction<Database>,
  writes: readonly { name: string; body: RawBuilder<unknown> }[],
  parameters: unknown[],
): { sql: string } {
  let text = '';
  const given = parameters.length;
  for (const w of writes) {
    const body = rawFragmentText(w.body.toOperationNode(), parameters);
    if (body === undefined) {
      parameters.length = given;
      return compiledWritesText(executor, writes, parameters);
    }
    text += `, ${quotedIdentifier(w.name)} as (${body})`;
  }
  return { sql: text };
}

/** `writesText` by kysely's compiler (exported for the test that compares the two). */
export function compiledWritesText(
  executor: Kysely<Database> | Transaction<Database>,
  writes: readonly { name: string; body: RawBuilder<unknown> }[],
  parameters: unknown[],
): { sql: string } {
  const plugged = executor.getExecutor();
  const plain = plugged.plugins.length ? plugged.withoutPlugins() : plugged;
  const compiled = sql
    .join(
      writes.map((w) => sql`, ${sql.id(w.name)} as (${w.body})`),
      sql``,
    )
    .compile({ getExecutor: () => plain });
  parameters.push(...compiled.parameters);
  return { sql: compiled.sql };
}

/**
 * The row `insertAtVersion` inserts for its `index`-th row (from 0), as a subquery with columns
 * `global_position`, `stream_version` and `recorded_at`, for its `writes`; no row when the statement inserts none.
 */
export function insertedRow(index: number): RawBuilder<unknown> {
  // asked for each event by each inline projection that handles it, every append: made once per index (a builder is immutable)
  let row = insertedRows[index];
  if (row === undefined) {
    row = sql`(select ins.global_position, ins.stream_version, ins.recorded_at from ins, h where ins.stream_version = h.version + ${index + 1}::int)`;
    if (index < INSERTED_ROWS_KEPT) insertedRows[index] = row;
  }
  return row;
}

/** `insertedRow`'s builders for the first rows of an append (more rows than that are built each time). */
const INSERTED_ROWS_KEPT = 64;
const insertedRows: RawBuilder<unknown>[] = [];

/** An `events` row as read whole (what `toStoredEvent` decodes). */
export type EventsRow = Parameters<typeof toStoredEvent>[0];

/** What `appendLocked` found and wrote. */
export interface AppendLocked {
  /** The tenant of the stream's row at `version` (null: none). */
  atTenant: string | null;
  /** The rows written, in stream order; none when something came past `version` (or it is not the tenant's row). */
  written: { global_position: string; stream_version: number; recorded_at: Date | string }[];
  /** The stream's rows past `version`, in order, as read under the lock. */
  missed: EventsRow[];
}

/**
 * The locked path of a catching-up append in one statement (one round trip; `executor` a
 * transaction, which holds the lock to its end): the function `events_append_locked` (migration
 * 0028) takes the stream's lock (the key `lockStream` takes; held already by the transaction, it is
 * taken again at once), then in a statement of its own, whose snapshot is taken after the lock and
 * so holds every append committed before it, inserts `rows` at `version + 1...` only when nothing
 * came past `version` and `version` is 0 or the tenant's row, and reads the rows past `version` and
 * the tenant of the row at it (so a caller whose insert was not made reads nothing more).
 */
export async function appendLocked(
  executor: Transaction<Database>,
  request: { tenantId: string; streamId: string; version: number; rows: readonly AppendRow[] },
): Promise<AppendLocked> {
  const { tenantId, streamId, version } = request;
  // one JSON array of the rows (their data and metadata are JSON text already, embedded as is)
  const rows = `[${request.rows.map((r) => `{"type":${JSON.stringify(r.type)},"data":${r.data},"metadata":${r.metadata}}`).join(',')}]`;
  const { rows: read } = await sql<Partial<EventsRow> & { part: 'head' | 'missed' | 'written'; at_tenant: string | null }>`
    select * from events_append_locked(hashtextextended(${streamId}::text, ${STREAM_LOCK_SEED}), ${tenantId}::text, ${streamId}::text, ${version}::int, ${rows}::jsonb)`.execute(
    executor,
  );
  return {
    atTenant: read.find((r) => r.part === 'head')?.at_tenant ?? null,
    written: read.filter((r) => r.part === 'written') as AppendLocked['written'],
    missed: read.filter((r) => r.part === 'missed') as EventsRow[],
  };
}
