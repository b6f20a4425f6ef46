import type { RawBuilder, Transaction } from 'kysely';
import type { EventType, StoredEvent } from '../event-types';
import type { Database } from '../schema';

/**
 * A read model derived only from events. It declares the event types it handles; a runner reads
 * each batch of the log once and hands every projection the events of its types, in log order.
 * `applyBatch` must be deterministic: the same events give the same rows.
 */
export interface Projection<T extends keyof Database = keyof Database> {
  readonly name: string;
  /** Event types this projection reads; others are never passed to it. */
  readonly handles: readonly EventType[];
  /** Tables this projection owns; a replay empties them. Listed children first. */
  readonly tables: readonly T[];
  /** The column of its tables that holds the stream id, for an inline projection (default `session_id`). */
  readonly streamKey?: StreamKey;
  /**
   * Inline only: true when applying `event` would change nothing the other events of the same
   * append do not: the events after it (`later`) write every row it would, or the events before it
   * (`earlier`, already applied) left its rows as it would leave them. `applyInline` then leaves it
   * out (a statement saved). Absent: every event is applied.
   */
  readonly coveredBy?: Covered;
  /**
   * Inline only, optional: `event`'s write as SQL for the append's own statement (see `SqlWrite`),
   * so an append whose every handled event has one is one statement, no transaction. Must write
   * exactly the rows `applyBatch([event])` would (a test compares them). Absent, or undefined for
   * an event: the append takes a transaction and `applyBatch`.
   */
  readonly sqlFor?: SqlFor;
  applyBatch(trx: Transaction<Database>, events: readonly StoredEvent[]): Promise<void>;
}

/** An event of an append not written yet: its stream version, position and time are known only in the append's statement. */
export type PendingEvent = WithoutPlace<StoredEvent>;
type WithoutPlace<E> = E extends unknown ? Omit<E, 'globalPosition' | 'streamVersion' | 'recordedAt'> : never;

/** What `sqlFor` writes with: the event's row, and names for its CTEs. */
export interface SqlWriteContext {
  /**
   * The event's row as the append inserts it: a subquery (use it as `from ${row} e`) with columns
   * `global_position`, `stream_version` and `recorded_at`; it has no row when the append writes nothing, so a write
   * that reads from it writes only when the append does.
   */
  readonly row: RawBuilder<unknown>;
  /** The name (an identifier) of one of this write's CTEs, unique in the statement. */
  ref(local: string): RawBuilder<unknown>;
}

/**
 * One event's write as data-modifying CTEs of the append's statement. Every CTE of a statement
 * sees the same snapshot (not each other's writes), and a row must not be written twice in one
 * statement: `rows` names each row written (`table:key`), and an append in which two writes name
 * one row takes the transaction path (`applyBatch`) instead.
 */
export interface SqlWrite {
  /** In order; a later one may read an earlier one's `returning` by its `ref`. */
  ctes: readonly { name: string; body: RawBuilder<unknown> }[];
  rows: readonly string[];
}

/** `Projection.sqlFor`: a write, null when the event changes nothing, undefined when it has no SQL form. */
export type SqlFor = (event: PendingEvent, ctx: SqlWriteContext) => SqlWrite | null | undefined;

/** See `Projection.coveredBy`: `event` and the events of its append before and after it, in stream order. */
export type Covered = (event: StoredEvent, append: { earlier: readonly StoredEvent[]; later: readonly StoredEvent[] }) => boolean;

/** The column of an inline projection's tables that holds the stream id: a session's, a world's, a world generation job's, or another stream's (`stream_id`: a tenant's). */
export type StreamKey = 'session_id' | 'world_id' | 'job_id' | 'stream_id';

/** The tables whose rows belong to one stream: a `session_id` (or, for a world, `world_id`; for a generation job, `job_id`) column holds the stream id. */
export type StreamKeyedTable = {
  [K in keyof Database]: Database[K] extends { session_id: string } | { world_id: string } | { job_id: string } | { stream_id: string } ? K : never;
}[keyof Database];

/**
 * A projection applied in the transaction of the append that changes it (`EventStore` option
 * `inline`), for what a turn reads right away. Its rows are keyed by stream: every row it writes
 * has `session_id` (or its `streamKey` column) = the stream id of the event, and only that stream's events change it. So a
 * stream's rows can be deleted and rebuilt alone (`rebuildInline`), under that stream's lock,
 * while every other stream goes on.
 */
export type InlineProjection = Projection<StreamKeyedTable>;

/** The definition of a projection that applies one event at a time. */
export interface EventByEventProjection<T extends keyof Database = keyof Database> {
  name: string;
  handles: readonly EventType[];
  tables: readonly T[];
  streamKey?: StreamKey;
  coveredBy?: Covered;
  sqlFor?: SqlFor;
  apply(trx: Transaction<Database>, event: StoredEvent): Promise<void>;
}

/** A projection whose batch is its events applied one by one, in order. */
export function eventByEvent<T extends keyof Database>(definition: EventByEventProjection<T>): Projection<T> {
  const { apply, ...rest } = definition;
  return {
    ...rest,
    async applyBatch(trx, events) {
      for (const event of events) await apply(trx, event);
    },
  };
}

/** The events of `events` a projection handles, in the same order. */
export function eventsFor(projection: Pick<Projection, 'handles'>, events: readonly StoredEvent[]): StoredEvent[] {
  return events.filter((e) => projection.handles.includes(e.type));
}
