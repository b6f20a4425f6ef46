import { type Kysely, sql, type Transaction } from 'kysely';
import { ConcurrencyError, InvalidEventError, StreamTenantMismatchError } from './errors';
import { eventSchemas, isEventType, type NewEvent, type StoredEvent } from './event-types';
import type { Database } from './schema';

/** Serializes appends so global positions become visible in order (projections never skip one). */
const APPEND_LOCK_KEY = 7_411_001;

export interface AppendRequest {
  tenantId: string;
  streamId: string;
  /** The stream's version the caller decided on: 0 for a new stream. */
  expectedVersion: number;
  events: NewEvent[];
}

export interface AppendResult {
  /** The stream version after the append. */
  version: number;
  firstPosition: number;
  lastPosition: number;
}

type Executor = Kysely<Database> | Transaction<Database>;

/**
 * One event of the log, read but not decoded yet: a projection decodes it where it applies it, so
 * an event it cannot read stops that projection for that stream only.
 */
export interface LogEntry {
  globalPosition: number;
  tenantId: string;
  streamId: string;
  type: string;
  /** Validates and returns the event; throws `InvalidEventError` when the log holds what no schema reads. */
  decode(): StoredEvent;
}

export function validateEvent(event: NewEvent): NewEvent {
  const schema = eventSchemas[event.type];
  if (!schema) throw new InvalidEventError(String((event as { type: unknown }).type), [{ path: 'type', message: 'unknown event type' }]);
  const parsed = schema.safeParse(event.data);
  if (!parsed.success) {
    throw new InvalidEventError(
      event.type,
      parsed.error.issues.map((i) => ({ path: i.path.join('.'), message: i.message })),
    );
  }
  return { ...event, data: parsed.data } as NewEvent;
}

export function toStoredEvent(row: {
  global_position: string | number;
  tenant_id: string;
  stream_id: string;
  stream_version: number;
  type: string;
  data: unknown;
  metadata: unknown;
  recorded_at: Date | string;
}): StoredEvent {
  if (!isEventType(row.type)) throw new InvalidEventError(row.type, [{ path: 'type', message: 'unknown event type in log' }]);
  return {
    globalPosition: Number(row.global_position),
    tenantId: row.tenant_id,
    streamId: row.stream_id,
    streamVersion: row.stream_version,
    type: row.type,
    data: eventSchemas[row.type].parse(row.data),
    metadata: (row.metadata ?? {}) as Record<string, unknown>,
    recordedAt: new Date(row.recorded_at).toISOString(),
  } as StoredEvent;
}

export function toLogEntry(row: Parameters<typeof toStoredEvent>[0]): LogEntry {
  return {
    globalPosition: Number(row.global_position),
    tenantId: row.tenant_id,
    streamId: row.stream_id,
    type: row.type,
    decode: () => toStoredEvent(row),
  };
}

/** The append-only log: optimistic appends per stream, ordered reads per stream and globally. */
export class EventStore {
  constructor(private readonly db: Kysely<Database>) {}

  async append(request: AppendRequest): Promise<AppendResult> {
    if (request.events.length === 0) throw new Error('append needs at least one event');
    const events = request.events.map(validateEvent);
    try {
      return await this.db.transaction().execute(async (trx) => {
        await sql`select pg_advisory_xact_lock(${APPEND_LOCK_KEY})`.execute(trx);
        const head = await streamHead(trx, request.streamId);
        if (head.version !== request.expectedVersion) {
          throw new ConcurrencyError(request.streamId, request.expectedVersion, head.version);
        }
        if (head.tenantId !== null && head.tenantId !== request.tenantId) {
          throw new StreamTenantMismatchError(request.streamId);
        }
        const rows = await trx
          .insertInto('events')
          .values(
            events.map((e, i) => ({
              tenant_id: request.tenantId,
              stream_id: request.streamId,
              stream_version: request.expectedVersion + i + 1,
              type: e.type,
              data: JSON.stringify(e.data),
              metadata: JSON.stringify(e.metadata ?? {}),
            })),
          )
          .returning('global_position')
          .execute();
        return {
          version: request.expectedVersion + events.length,
          firstPosition: Number(rows[0].global_position),
          lastPosition: Number(rows[rows.length - 1].global_position),
        };
      });
    } catch (error) {
      if (isUniqueViolation(error)) {
        const head = await streamHead(this.db, request.streamId);
        throw new ConcurrencyError(request.streamId, request.expectedVersion, head.version);
      }
      throw error;
    }
  }

  /** Events of one stream with version > afterVersion, in order. */
  async readStream(streamId: string, afterVersion = 0, limit?: number): Promise<StoredEvent[]> {
    let query = this.db.selectFrom('events').selectAll().where('stream_id', '=', streamId).where('stream_version', '>', afterVersion).orderBy('stream_version');
    if (limit !== undefined) query = query.limit(limit);
    const rows = await query.execute();
    return rows.map(toStoredEvent);
  }

  /** Events after a global position, in log order, at most `limit`. */
  async readAll(afterPosition: number, limit: number, executor: Executor = this.db): Promise<StoredEvent[]> {
    const rows = await executor
      .selectFrom('events')
      .selectAll()
      .where('global_position', '>', String(afterPosition))
      .orderBy('global_position')
      .limit(limit)
      .execute();
    return rows.map(toStoredEvent);
  }

  /**
   * Log entries after a global position, in log order, at most `limit`; with `streamId`, that
   * stream's only, and with `throughPosition`, none after it.
   */
  async readLog(afterPosition: number, limit: number, options: { executor?: Executor; streamId?: string; throughPosition?: number } = {}): Promise<LogEntry[]> {
    let query = (options.executor ?? this.db).selectFrom('events').selectAll().where('global_position', '>', String(afterPosition));
    if (options.streamId !== undefined) query = query.where('stream_id', '=', options.streamId);
    if (options.throughPosition !== undefined) query = query.where('global_position', '<=', String(options.throughPosition));
    const rows = await query.orderBy('global_position').limit(limit).execute();
    return rows.map(toLogEntry);
  }

  /** The global position of the last event in the log (0 when it is empty). */
  async headPosition(executor: Executor = this.db): Promise<number> {
    const row = await executor
      .selectFrom('events')
      .select(sql<string | null>`max(global_position)`.as('head'))
      .executeTakeFirst();
    return Number(row?.head ?? 0);
  }

  /** The tenant that owns a stream, or null when the stream does not exist. */
  async streamTenant(streamId: string): Promise<string | null> {
    const row = await this.db.selectFrom('events').select('tenant_id').where('stream_id', '=', streamId).where('stream_version', '=', 1).executeTakeFirst();
    return row?.tenant_id ?? null;
  }

  async streamVersion(streamId: string): Promise<number> {
    return (await streamHead(this.db, streamId)).version;
  }
}

async function streamHead(executor: Executor, streamId: string): Promise<{ version: number; tenantId: string | null }> {
  const row = await executor
    .selectFrom('events')
    .select(['stream_version', 'tenant_id'])
    .where('stream_id', '=', streamId)
    .orderBy('stream_version', 'desc')
    .limit(1)
    .executeTakeFirst();
  return { version: row?.stream_version ?? 0, tenantId: row?.tenant_id ?? null };
}

function isUniqueViolation(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: string }).code === '23505';
}
