import { type RawBuilder, sql } from 'kysely';
import type { EventType } from './event-types';
import type { toStoredEvent } from './stored-event';

/** A row of `pendingSuffixQuery`: an event, or (`before_suffix` null) the `alongside` value alone. */
export type PendingSuffixRow = Parameters<typeof toStoredEvent>[0] & { from_version: number; before_suffix: boolean | null; alongside?: unknown };

/**
 * The statement `EventStore.readPendingSuffix` sends (exported for the EXPLAIN test): the session's
 * events from its earliest pending input on, or from its latest input when none is pending.
 *
 * Both reads of `executions` are served by its (session_id, submitted_version) indexes. The
 * stream's rows are read by (stream_id, stream_version), in subqueries the planner may not flatten
 * (`offset 0`), their tenant checked on the rows found (a stream is one tenant's: the append
 * refuses another's). With the tenant in the same scan, a log without statistics (autovacuum off, a
 * new database) was read through the (tenant_id, stream_id) index, the session's whole stream
 * filtered on the version (issue 33: the suffix of a 650-event session read 110 buffers, now 27).
 * The tenant checked after the read means that a stream id of another tenant returns no row but
 * is still walked (its suffix, by index): callers pass a session id already found in their tenant
 * (the session's view, the cancel's execution), as every caller does today.
 *
 * With `lastBefore`, the last event of that type before the suffix comes in the same statement
 * (what `lastOfType` at the suffix's start reads), after the suffix's rows. The type is written in
 * the statement, not sent as a parameter, so that a prepared statement's generic plan can take a
 * partial index of that type (`events_stream_preferences`, migration 0031: the journal's
 * `session.preferences-changed@1`) instead of walking the stream before the suffix. With `alongside` (one
 * value, a read of the session's views: `historyViewJson`), that value in a last row of its own,
 * read in the same snapshot.
 */
export function pendingSuffixQuery(
  tenantId: string,
  streamId: string,
  options: { lastBefore?: EventType; alongside?: RawBuilder<unknown> } = {},
): RawBuilder<PendingSuffixRow> {
  const before = options.lastBefore;
  const alongside = options.alongside;
  return sql<PendingSuffixRow>`
    with p as (
      select coalesce(
        (select min(submitted_version) from executions where tenant_id = ${tenantId} and session_id = ${streamId} and status in ('queued', 'running')),
        (select max(submitted_version) from executions where tenant_id = ${tenantId} and session_id = ${streamId}),
        1
      ) as from_version
    )
    select e.*, p.from_version, false as before_suffix${alongside === undefined ? sql`` : sql`, null::json as alongside`}
    from p cross join lateral (select * from events where stream_id = ${streamId} and stream_version >= p.from_version offset 0) e
    where e.tenant_id = ${tenantId}
    ${
      before === undefined
        ? sql``
        : sql`union all
    select b.*, p.from_version, true as before_suffix${alongside === undefined ? sql`` : sql`, null::json`} from p cross join lateral (
      select * from (
        select * from events where stream_id = ${streamId} and type = ${sql.lit(before)} and stream_version < p.from_version
        order by stream_version desc offset 0
      ) s where s.tenant_id = ${tenantId} order by s.stream_version desc limit 1
    ) b`
    }
    ${
      alongside === undefined
        ? sql``
        : sql`union all
    select (null::events).*, null::int, null::boolean, ${alongside}`
    }
    order by before_suffix, stream_version`;
}
