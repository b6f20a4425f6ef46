import { type Kysely, type Selectable, sql, type Transaction } from 'kysely';
import type { LogCursor } from '../../event-store';
import type { Database, ProjectionQuarantineTable } from '../../schema';

type Executor = Kysely<Database> | Transaction<Database>;

/** Default of `AsyncProjectorOptions.quarantineAfter` (`COVEL_PROJECTION_QUARANTINE_AFTER`). */
export const DEFAULT_QUARANTINE_AFTER = 5;

/**
 * An event an async projection skipped after failing to apply it `quarantineAfter` times. `error`,
 * `tenantId` and `streamId` are for the operator; a tenant is only told its view misses an event.
 */
export interface QuarantinedEvent {
  id: string;
  projection: string;
  shard: number;
  globalPosition: number;
  eventType: string;
  tenantId: string;
  streamId: string;
  /** SQLSTATE, engine error code, or the error's class name (no tenant data). */
  errorCode: string;
  /** The last failure, one line (may quote tenant data). */
  error: string;
  attempts: number;
  /** ISO 8601. */
  quarantinedAt: string;
  acknowledgedAt: string | null;
  acknowledgedBy: string | null;
  /** Set when a replay applied the event after all (ISO 8601). */
  resolvedAt: string | null;
}

export interface QuarantineFilter {
  /** `open`: neither acknowledged nor resolved (what keeps `/health` degraded); `unresolved`: not applied by a replay since; default all. */
  state?: 'open' | 'unresolved' | 'all';
  projections?: readonly string[];
  /** At most this many (the newest); default all. */
  limit?: number;
}

/** A record's id as it is written: a positive integer of at most 18 digits (a bigint). */
export const QUARANTINE_ID_PATTERN = /^[1-9][0-9]{0,17}$/;

const iso = (d: Date | string | null) => (d === null ? null : new Date(d).toISOString());

function toQuarantinedEvent(r: Selectable<ProjectionQuarantineTable>): QuarantinedEvent {
  return {
    id: String(r.id),
    projection: r.projection,
    shard: Number(r.shard),
    globalPosition: Number(r.global_position),
    eventType: r.event_type,
    tenantId: r.tenant_id,
    streamId: r.stream_id,
    errorCode: r.error_code,
    error: r.error,
    attempts: Number(r.attempts),
    quarantinedAt: iso(r.quarantined_at)!,
    acknowledgedAt: iso(r.acknowledged_at),
    acknowledgedBy: r.acknowledged_by,
    resolvedAt: iso(r.resolved_at),
  };
}

/**
 * Records the event as skipped by the projection (in the caller's transaction). The same event
 * quarantined again (by a replay) keeps its row: the new error and attempts, unresolved again, and
 * unacknowledged again when it had been resolved meanwhile. Returns the row's id.
 */
export async function recordQuarantine(
  trx: Executor,
  record: {
    projection: string;
    shard: number;
    cursor: LogCursor;
    eventType: string;
    tenantId: string;
    streamId: string;
    errorCode: string;
    error: string;
    attempts: number;
  },
): Promise<string> {
  const row = await trx
    .insertInto('projection_quarantine')
    .values({
      projection: record.projection,
      shard: record.shard,
      global_position: String(record.cursor.globalPosition),
      transaction_id: record.cursor.transactionId,
      event_type: record.eventType,
      tenant_id: record.tenantId,
      stream_id: record.streamId,
      error_code: record.errorCode,
      error: record.error,
      attempts: record.attempts,
    })
    .onConflict((oc) =>
      oc.columns(['projection', 'global_position']).doUpdateSet({
        error_code: (eb) => eb.ref('excluded.error_code'),
        error: (eb) => eb.ref('excluded.error'),
        attempts: (eb) => eb.ref('excluded.attempts'),
        quarantined_at: sql<Date>`now()`,
        acknowledged_at: sql<Date | null>`case when projection_quarantine.resolved_at is null then projection_quarantine.acknowledged_at end`,
        acknowledged_by: sql<string | null>`case when projection_quarantine.resolved_at is null then projection_quarantine.acknowledged_by end`,
        resolved_at: null,
      }),
    )
    .returning('id')
    .executeTakeFirstOrThrow();
  return String(row.id);
}

/** Marks the projection's records of these events resolved (a replay applied them); returns how many. */
export async function resolveQuarantine(trx: Executor, request: { projection: string; globalPositions: readonly number[] }): Promise<number> {
  if (request.globalPositions.length === 0) return 0;
  const result = await trx
    .updateTable('projection_quarantine')
    .set({ resolved_at: sql<Date>`now()` })
    .where('projection', '=', request.projection)
    .where('resolved_at', 'is', null)
    .where(
      'global_position',
      'in',
      request.globalPositions.map((p) => String(p)),
    )
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/**
 * The quarantine records: every tenant's for the operator (`list`, `acknowledge`), one tenant's
 * session for the views that tenant reads (`forStream`).
 */
export class QuarantineRecords {
  constructor(private readonly db: Kysely<Database>) {}

  /** Every tenant's records, newest first (operators only: they hold tenant ids and error text). */
  async list(filter: QuarantineFilter = {}): Promise<QuarantinedEvent[]> {
    const rows = await this.db
      .selectFrom('projection_quarantine')
      .selectAll()
      .$if(filter.state === 'open', (q) => q.where('acknowledged_at', 'is', null).where('resolved_at', 'is', null))
      .$if(filter.state === 'unresolved', (q) => q.where('resolved_at', 'is', null))
      .$if(filter.projections !== undefined, (q) =>
        filter.projections!.length === 0 ? q.where(sql<boolean>`false`) : q.where('projection', 'in', filter.projections!),
      )
      .orderBy('id', 'desc')
      .$if(filter.limit !== undefined, (q) => q.limit(filter.limit!))
      .execute();
    return rows.map(toQuarantinedEvent);
  }

  /** One record by id (null: none, or the id is not a number). */
  async get(id: string): Promise<QuarantinedEvent | null> {
    if (!QUARANTINE_ID_PATTERN.test(id)) return null;
    const row = await this.db
      .selectFrom('projection_quarantine')
      .selectAll()
      .where('id', '=', sql<string>`${id}::bigint`)
      .executeTakeFirst();
    return row ? toQuarantinedEvent(row) : null;
  }

  /** The operator has seen it: `/health` no longer counts it. Idempotent (the first acknowledgement is kept); null: no such record. */
  async acknowledge(id: string, by: string): Promise<QuarantinedEvent | null> {
    if (!QUARANTINE_ID_PATTERN.test(id)) return null;
    await this.db
      .updateTable('projection_quarantine')
      .set({ acknowledged_at: sql<Date>`now()`, acknowledged_by: by })
      .where('id', '=', sql<string>`${id}::bigint`)
      .where('acknowledged_at', 'is', null)
      .execute();
    return this.get(id);
  }

  /** The tenant's stream's unresolved records in this projection (what a view of that session misses), oldest first. */
  async forStream(request: { tenantId: string; streamId: string; projection: string }): Promise<QuarantinedEvent[]> {
    const rows = await this.db
      .selectFrom('projection_quarantine')
      .selectAll()
      .where('tenant_id', '=', request.tenantId)
      .where('stream_id', '=', request.streamId)
      .where('projection', '=', request.projection)
      .where('resolved_at', 'is', null)
      .orderBy('global_position')
      .execute();
    return rows.map(toQuarantinedEvent);
  }

  /**
   * Which of the tenant's given streams have an unresolved record in this projection (their views
   * of it miss an event): one read whatever the number of streams.
   */
  async streamsWithUnresolved(request: { tenantId: string; projection: string; streamIds: readonly string[] }): Promise<Set<string>> {
    if (request.streamIds.length === 0) return new Set();
    const rows = await this.db
      .selectFrom('projection_quarantine')
      .select('stream_id')
      .distinct()
      .where('tenant_id', '=', request.tenantId)
      .where('projection', '=', request.projection)
      .where('stream_id', 'in', [...request.streamIds])
      .where('resolved_at', 'is', null)
      .execute();
    return new Set(rows.map((r) => r.stream_id));
  }

  /** Per projection: records ever made (the counter) and open ones. */
  async counts(): Promise<Map<string, { total: number; open: number }>> {
    const rows = await this.db
      .selectFrom('projection_quarantine')
      .select([
        'projection',
        sql<number>`count(*)::int`.as('total'),
        sql<number>`(count(*) filter (where acknowledged_at is null and resolved_at is null))::int`.as('open'),
      ])
      .groupBy('projection')
      .execute();
    return new Map(rows.map((r) => [r.projection, { total: Number(r.total), open: Number(r.open) }]));
  }
}
