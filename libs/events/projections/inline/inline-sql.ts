import { type RawBuilder, sql } from 'kysely';
import { InlineProjectionFailedError } from '../../errors';
import type { NewEvent, StoredEvent } from '../../event-types';
import type { InlineProjection, PendingEvent } from '../projection';

/** An append's inline projection writes as data-modifying CTEs of its own statement (`inlineStatement`). */
export interface InlineStatement {
  /** The CTEs, in order, their names unique in the statement. */
  ctes: readonly { name: string; body: RawBuilder<unknown> }[];
  /** Which projections write, and for which events (what `inlineFailure` reports). */
  writers: readonly { projection: InlineProjection; eventTypes: readonly string[] }[];
}

/**
 * The writes of the inline `projections` for `events` (an append of one stream, in order) as CTEs of
 * the append's statement (`insertAtVersion`): each projection's `sqlFor` of each event it handles,
 * the events `coveredBy` leaves out left out, as `applyInline` does. `row(i)` is the i-th event's
 * inserted row (see `SqlWriteContext.row`). Undefined when the append must take a transaction
 * (`applyInline`) instead: an event a projection handles has no SQL form, or two writes name one
 * row (every CTE sees the statement's snapshot, not the others' writes, and a row updated twice in
 * one statement keeps one of the two). No writes at all: an empty list.
 */
export function inlineStatement(
  projections: readonly InlineProjection[],
  request: { tenantId: string; streamId: string },
  events: readonly NewEvent[],
  row: (index: number) => RawBuilder<unknown>,
): InlineStatement | undefined {
  const { tenantId, streamId } = request;
  // each field named, not spread (issue 33: a spread of objects of many shapes, every append's
  // events, cost some µs each; a NewEvent has no other field)
  const pending = events.map((e) => ({ type: e.type, data: e.data, metadata: e.metadata ?? {}, tenantId, streamId }) as PendingEvent);
  // what `coveredBy` reads: the events in order, of one time (`recorded_at` is the statement's
  // transaction's start, the same for every row of an append, as in a transaction of its own)
  const provisional = pending.map(
    (e, i) =>
      ({ type: e.type, data: e.data, metadata: e.metadata, tenantId, streamId, globalPosition: 0, streamVersion: i + 1, recordedAt: 'pending' }) as StoredEvent,
  );
  const ctes: { name: string; body: RawBuilder<unknown> }[] = [];
  const writers = new Map<InlineProjection, string[]>();
  const rows = new Set<string>();
  for (const [index, event] of pending.entries()) {
    for (const [p, projection] of projections.entries()) {
      if (!projection.handles.includes(event.type)) continue;
      if (projection.coveredBy?.(provisional[index], { earlier: provisional.slice(0, index), later: provisional.slice(index + 1) })) continue;
      if (!projection.sqlFor) return undefined;
      const prefix = `inline_${index}_${p}_`;
      const write = projection.sqlFor(event, { row: row(index), ref: (local) => sql.id(prefix + local) });
      if (write === undefined) return undefined;
      if (write === null) continue;
      for (const key of write.rows) {
        if (rows.has(key)) return undefined;
        rows.add(key);
      }
      for (const cte of write.ctes) ctes.push({ name: prefix + cte.name, body: cte.body });
      writers.set(projection, [...(writers.get(projection) ?? []), event.type]);
    }
  }
  return { ctes, writers: [...writers].map(([projection, eventTypes]) => ({ projection, eventTypes })) };
}

/**
 * What a failed one-statement append with `statement`'s writes reports: a failure PostgreSQL
 * attributes to a table of a projection that wrote (a constraint, a not-null column, ...) is that
 * projection's (`InlineProjectionFailedError`, naming the types of the events it wrote for, as
 * `applyInline` names its event); anything else (the events' own insert, a lost connection) is
 * the driver's error as it is (null).
 */
export function inlineFailure(statement: InlineStatement, request: { tenantId: string; streamId: string }, error: unknown): InlineProjectionFailedError | null {
  if (typeof error !== 'object' || error === null) return null;
  const { table } = error as { table?: unknown };
  if (typeof table !== 'string') return null;
  const writer = statement.writers.find((w) => (w.projection.tables as readonly string[]).includes(table));
  if (!writer) return null;
  return new InlineProjectionFailedError(writer.projection.name, [...new Set(writer.eventTypes)].join(', '), request.streamId, request.tenantId, error);
}
