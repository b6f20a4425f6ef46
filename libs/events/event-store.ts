import { type Kysely, type RawBuilder, type Selectable, sql, type Transaction } from 'kysely';
import { ConcurrencyError, IdempotencyKeyTakenError, InvalidEventError, StreamTenantMismatchError } from './errors';
import { eventSchemas, type EventType, type NewEvent, type StoredEvent } from './event-types';
import { applyInline } from './projections/inline/apply-inline';
import { inlineFailure, inlineStatement, type InlineStatement } from './projections/inline/inline-sql';
import { readInheritedStory } from './story-log';
import { readStreamForTurn } from './turn-read';
import { toStoredEvent } from './stored-event';
import { pendingSuffixQuery } from './pending-suffix-query';
import { precompiled } from './precompiled';
import { textStatement } from './sql-text';

export { toStoredEvent };
import type { InlineProjection } from './projections/projection';
import type { Database, EventsTable } from './schema';
import { StreamContention } from './stream-contention';
import { appendLocked, type EventsRow, insertAtVersion, insertedRow } from './stream-lock';
import { InvalidInputError } from '../errors';

/** Unique (stream_id, stream_version): a concurrent append to the same stream (migration 0001). */
const STREAM_VERSION_CONSTRAINT = 'events_stream_version_unique';
/** Unique (tenant_id, metadata->>'idempotencyKey') where set (migration 0007). */
const IDEMPOTENCY_KEY_CONSTRAINT = 'events_idempotency_key_unique';
/** The metadata fields of the first event of an append made under an idempotency key. */
export const IDEMPOTENCY_KEY_FIELD = 'idempotencyKey';
export const IDEMPOTENCY_REQUEST_HASH_FIELD = 'idempotencyRequestHash';

/** Guards an append: the key is recorded in the first event, in the same row as the append. */
export interface IdempotencyRecord {
  /** Unique per tenant; a second append with it fails with `IdempotencyKeyTakenError`. */
  key: string;
  /** A hash of the canonical request the key was first used for, to tell a repeat from a misuse. */
  requestHash: string;
}

export interface AppendRequest {
  tenantId: string;
  streamId: string;
  /** The stream's version the caller decided on: 0 for a new stream. */
  expectedVersion: number;
  events: NewEvent[];
  idempotency?: IdempotencyRecord;
  /**
   * Writes that belong with these events (a configuration row the log must not hold, e.g. a key's
   * hash): run in the append's transaction after its events, under the stream's lock. One that
   * throws fails the append whole: nothing of it is written.
   */
  alongside?: (trx: Transaction<Database>) => Promise<void>;
}

/** `EventStore.appendCatchingUp`: events built for the stream at `afterVersion`, and how to build them again past it. */
export interface CatchingUpAppendRequest {
  tenantId: string;
  streamId: string;
  /** The stream version the caller has read up to (0: none). */
  afterVersion: number;
  /** What to append when the stream is still at `afterVersion` (at least one event). */
  events: NewEvent[];
  /** What to append when the stream holds `missed` past `afterVersion` (in order; none: append nothing). */
  rebuild: (missed: StoredEvent[]) => NewEvent[];
}

export interface CatchingUpAppendResult {
  /** What the stream held past `afterVersion` before the append, in order. */
  missed: StoredEvent[];
  /** The append; null when `rebuild` returned none. */
  appended: AppendResult | null;
}

/** The first append made under an idempotency key: its first event and the request hash recorded. */
export interface IdempotentAppend {
  event: StoredEvent;
  requestHash: string;
}

export interface AppendResult {
  /** The stream version after the append. */
  version: number;
  firstPosition: number;
  lastPosition: number;
  /**
   * The appended events as stored, in order. The append was made at the expected version, so a
   * reader holding the stream up to that version is current with these applied (no read needed).
   */
  events: StoredEvent[];
  /** `appendAtHead` with `earliestPending`: the session's earliest execution queued or running before this append (null: none). */
  earliestPending?: string | null;
}

type Executor = Kysely<Database> | Transaction<Database>;

export interface EventStoreOptions {
  /**
   * Read models written with each append, to the appended events they handle (in stream order):
   * they are never behind the log. When every write has a SQL form (`Projection.sqlFor`) and no
   * row is written twice, as CTEs of the append's one statement (no transaction); else in the
   * append's transaction (`applyInline`). One that fails fails the append whole
   * (`InlineProjectionFailedError`). Default: none (a store that only reads, or a test's).
   */
  inline?: readonly InlineProjection[];
  /** Told of each append once it has committed (metrics); must not throw, is not awaited. */
  onAppended?: (result: AppendResult) => void;
  /** Which streams others appended to first lately (`appendCatchingUp`'s choice of path). Default: a memory of its own. */
  contention?: StreamContention;
}

/** How many partitions the log is split into (migration 0008: a hash of the stream id). */
export const LOG_PARTITIONS = 16;

/**
 * A reader's place in the log: the last event it read, by the log's read order
 * (transaction_id, global_position). `transactionId` is an xid8 as a decimal string.
 */
export interface LogCursor {
  transactionId: string;
  globalPosition: number;
}

/** Before the first event. */
export const LOG_START: LogCursor = Object.freeze({ transactionId: '0', globalPosition: 0 });

/** A log entry with its place in the read order. */
export interface OrderedLogEntry extends LogEntry {
  cursor: LogCursor;
}

export interface ReadAfterOptions {
  limit: number;
  /** Only this partition's events (0..LOG_PARTITIONS-1). */
  partition?: number;
  executor?: Executor;
}

/**
 * One event of the log, read but not decoded yet: a projection decodes it where it applies it, so
 * an event it cannot read stops that projection for that stream only.
 */
export interface LogEntry {
  globalPosition: number;
  tenantId: string;
  streamId: string;
  type: string;
  /**
   * Validates and returns the event; throws `InvalidEventError` when the log holds what no schema reads.
   * Parsed once per entry: every later call answers the same event (read-only: a projection must not
   * change it) or throws the same error, so the projections applying one batch do not parse it again each.
   */
  decode(): StoredEvent;
}

/**
 * The events `validateEvent` gave (frozen): checked already, given back as they are when appended
 * (issue 33: a worker's group of appends validates what it builds before the store would, and an
 * event of a turn's can be ~100 KB of request text).
 */
const validatedEvents = new WeakSet<NewEvent>();

/**
 * The event with its data as its type's schema parses it (a new, frozen object), or
 * `InvalidEventError`. An event this function gave is given back as it is, not parsed again.
 */
export function validateEvent(event: NewEvent): NewEvent {
  if (validatedEvents.has(event)) return event;
  const schema = eventSchemas[event.type];
  if (!schema) throw new InvalidEventError(String((event as { type: unknown }).type), [{ path: 'type', message: 'unknown event type' }]);
  const parsed = schema.safeParse(event.data);
  if (!parsed.success) {
    throw new InvalidEventError(
      event.type,
      parsed.error.issues.map((i) => ({ path: i.path.join('.'), message: i.message })),
    );
  }
  // its fields named, not spread (issue 33: a spread costs some µs an event); a NewEvent has no other
  const valid = Object.freeze(
    event.metadata === undefined ? { type: event.type, data: parsed.data } : { type: event.type, data: parsed.data, metadata: event.metadata },
  ) as NewEvent;
  validatedEvents.add(valid);
  return valid;
}

/** The `decode` of an entry read without its data (`readAfterEach` with `types`). */
const notRead = (type: string) => (): never => {
  throw new Error(`an event of type ${type} was read without its data (not among the read's types)`);
};

export function toLogEntry(row: Parameters<typeof toStoredEvent>[0]): LogEntry {
  return {
    globalPosition: Number(row.global_position),
    tenantId: row.tenant_id,
    streamId: row.stream_id,
    type: row.type,
    decode: once(() => toStoredEvent(row)),
  };
}

/** `f`'s first answer (or error), kept: later calls answer it without calling `f` again. */
function once<T>(f: () => T): () => T {
  let done: { value: T } | { error: unknown } | undefined;
  return () => {
    if (!done) {
      try {
        done = { value: f() };
      } catch (error) {
        done = { error };
      }
    }
    if ('error' in done) throw done.error;
    return done.value;
  };
}

/**
 * The append-only log: optimistic appends per stream, ordered reads per stream and globally.
 *
 * An append takes its stream's lock (`lockStream`), checks the expected version and inserts; there
 * is no lock across streams, so appends to different streams commit in any order and
 * `global_position` (a sequence) does not become visible in order. Readers of the whole log never
 * read by `global_position` alone: `readAfter` orders by (transaction_id, global_position) and
 * returns only events of transactions below the oldest one still running, a set no later commit
 * can add to, so a reader's cursor never has an event appear behind it (see `readAfter`).
 */
export class EventStore {
  private readonly inline: readonly InlineProjection[];
  private readonly onAppended: EventStoreOptions['onAppended'];
  private readonly contention: StreamContention;

  constructor(
    private readonly db: Kysely<Database>,
    options: EventStoreOptions = {},
  ) {
    this.inline = options.inline ?? [];
    this.onAppended = options.onAppended;
    this.contention = options.contention ?? new StreamContention();
  }

  async append(request: AppendRequest): Promise<AppendResult> {
    return this.appendAt(request, request.expectedVersion);
  }

  /**
   * Appends after the stream's head, whatever its version, for events that depend on nothing the
   * stream holds (a player's input): no read of the head first, the append's own statement reads it
   * under the stream's lock. The stream must exist and be the tenant's, else
   * `StreamTenantMismatchError` and nothing is written (a stream is never started here). A
   * `ConcurrencyError` is still possible (an append committed between the statement's snapshot and
   * its lock): the caller tries again. With `earliestPending`, the statement also reads the
   * session's earliest pending execution before the append (`AppendResult.earliestPending`): the
   * enqueue decision of an input needs no read after it.
   */
  async appendAtHead(request: Omit<AppendRequest, 'expectedVersion'> & { earliestPending?: boolean }): Promise<AppendResult> {
    return this.appendAt(request, null);
  }

  private async appendAt(
    request: Omit<AppendRequest, 'expectedVersion'> & { earliestPending?: boolean },
    expectedVersion: number | null,
  ): Promise<AppendResult> {
    if (request.events.length === 0) throw new InvalidInputError([{ path: 'events', message: 'an append needs at least one event' }]);
    const events = request.events.map(validateEvent);
    // lock, version check, insert and the inline projections' writes are one statement; a
    // transaction around it only when more must be written with it that it cannot hold (`alongside`,
    // an inline projection's write with no SQL form, or two writes of one row: `inlineStatement`),
    // or when the statement went stale (an inline rebuild of the stream committed between its
    // snapshot and its lock: it wrote nothing, `insertAtVersion`)
    const statement = request.alongside === undefined ? this.inlineStatement(request, events) : undefined;
    /** The append in `executor`; null: `writes` went stale (an inline rebuild of the stream committed between the statement's snapshot and its lock), nothing written. */
    const appendIn = async (executor: Executor, writes?: InlineStatement): Promise<AppendResult | null> => {
      // this stream's appends wait for each other (and for an inline rebuild of it); others don't
      const { head, appended, stale } = await this.writeAtVersion(executor, request, expectedVersion, events, 'wait', writes);
      if (stale) return null;
      if (expectedVersion === null && head.version === 0) throw new StreamTenantMismatchError(request.streamId);
      if (expectedVersion !== null && head.version !== expectedVersion) throw new ConcurrencyError(request.streamId, expectedVersion, head.version);
      if (head.tenantId !== null && head.tenantId !== request.tenantId) throw new StreamTenantMismatchError(request.streamId);
      if (!appended) throw new Error('an append at its version wrote nothing');
      return appended;
    };
    const inTransaction = () =>
      this.db.transaction().execute(async (trx): Promise<AppendResult> => {
        const appended = await appendIn(trx);
        if (!appended) throw new Error('an append without writes went stale');
        if (this.inline.length > 0) await applyInline(trx, this.inline, appended.events);
        if (request.alongside) await request.alongside(trx);
        return appended;
      });
    try {
      // a statement gone stale wrote nothing: the transaction, whose statements read after the lock
      const result = (statement && (await appendIn(this.db, statement))) ?? (await inTransaction());
      this.onAppended?.(result);
      return result;
    } catch (error) {
      const constraint = uniqueViolationConstraint(error);
      if (constraint === STREAM_VERSION_CONSTRAINT) {
        const head = await streamHead(this.db, request.streamId);
        throw new ConcurrencyError(request.streamId, expectedVersion ?? head.version - 1, head.version);
      }
      if (constraint === IDEMPOTENCY_KEY_CONSTRAINT && request.idempotency) {
        throw new IdempotencyKeyTakenError(request.tenantId, request.idempotency.key);
      }
      throw (statement && inlineFailure(statement, request, error)) ?? error;
    }
  }

  /** The inline projections' writes for `events` as CTEs of the append's statement; undefined: the append takes a transaction (`inlineStatement`). */
  private inlineStatement(request: { tenantId: string; streamId: string }, events: readonly NewEvent[]): InlineStatement | undefined {
    return inlineStatement(this.inline, request, events, insertedRow);
  }

  /**
   * The one-statement append (`insertAtVersion`): `events` (validated) at `expectedVersion + 1...`
   * (null: at the head of a stream that exists), in `executor`. Resolves to what the statement
   * found (the lock taken or not, the head) and the append, null when it wrote nothing. The inline
   * projections are written here only as `writes` (CTEs of the statement), `alongside` never. A unique violation (an append committed
   * between the statement's snapshot and its lock, a key taken) is thrown as the driver's error.
   */
  private async writeAtVersion(
    executor: Executor,
    request: Pick<AppendRequest, 'tenantId' | 'streamId' | 'idempotency'> & { earliestPending?: boolean },
    expectedVersion: number | null,
    events: readonly NewEvent[],
    lock: 'wait' | 'try' = 'wait',
    writes?: InlineStatement,
  ): Promise<{ locked: boolean; stale: boolean; head: { version: number; tenantId: string | null }; appended: AppendResult | null }> {
    const rows = events.map((e, i) => ({ type: e.type, data: JSON.stringify(e.data), metadata: JSON.stringify(metadataWithKey(request, e, i)) }));
    const {
      locked,
      head,
      rows: written,
      earliestPending,
      stale,
    } = await insertAtVersion(executor, {
      tenantId: request.tenantId,
      streamId: request.streamId,
      expectedVersion,
      rows,
      lock,
      ...(request.earliestPending ? { earliestPending: true } : {}),
      ...(writes?.ctes.length ? { writes: writes.ctes } : {}),
    });
    if (written.length === 0) return { locked, stale, head, appended: null };
    const stored = storedAsWritten(request, events, written);
    return {
      locked,
      stale,
      head,
      appended: {
        version: head.version + events.length,
        firstPosition: stored[0].globalPosition,
        lastPosition: stored[stored.length - 1].globalPosition,
        events: stored,
        ...(earliestPending === undefined ? {} : { earliestPending }),
      },
    };
  }

  /**
   * An append that waits for the stream instead of failing when others append to it first.
   *
   * It is tried first as an append at `afterVersion` (`insertAtVersion`, taking the stream's lock
   * only when it is free): one statement, the inline projections' writes in it when they have a
   * SQL form (`inlineStatement`: the statement's snapshot holds every earlier append of the stream
   * when its insert writes), else one transaction without a lock statement (so too when that
   * statement went stale: an inline rebuild of the stream committed between its snapshot and its
   * lock, and it wrote nothing). The events were built from the stream up to
   * `afterVersion`, and the statement writes them only at `afterVersion + 1...` under the lock, so
   * what it writes is what the locked path below would write (the unique
   * (stream_id, stream_version) index turns away an insert past a snapshot that predates the lock).
   *
   * When it writes nothing (another append came first, one is being made, or the stream is not the
   * tenant's), the locked path, which never fails for others appending first: one statement
   * (`appendLocked`, a PL/pgSQL function) takes the stream's lock, then its conditional insert (in a
   * snapshot taken after the lock) writes `events` when nothing came past `afterVersion`, else
   * returns what came; the append is then what `rebuild` makes of it, at the head. Nothing can come
   * in between: the lock is held to the commit. `rebuild` returning none appends nothing; throwing
   * (a fence that moved on) rolls the transaction back and nothing is written; the locked path
   * applies the inline projections in its transaction (`applyInline`; its insert reads a later
   * snapshot than the statement's). After a first try in a transaction (writes with no SQL form)
   * the locked path goes on in that transaction (its statement takes the lock again at once when
   * the first try took it, else waits for it); after a first try of one statement, or one that met
   * a later append on the unique index (its transaction is then over), it is a transaction of its
   * own. For a writer whose events depend on the stream only through what it
   * folds from `missed` (`ExecutionRun`).
   *
   * On a stream others appended to first lately (`StreamContention`: sibling runtimes of a turn
   * appending at once) the first try would mostly be wasted: the locked path is taken directly.
   */
  async appendCatchingUp(request: CatchingUpAppendRequest): Promise<CatchingUpAppendResult> {
    const { tenantId, streamId, afterVersion } = request;
    if (request.events.length === 0) throw new InvalidInputError([{ path: 'events', message: 'an append needs at least one event' }]);
    const events = request.events.map(validateEvent);
    const statement = this.inlineStatement(request, events);
    /** The first try: the append at `afterVersion`, when the lock is free; `SnapshotBehind` when the unique index turned it away. */
    const tryAtVersion = async (executor: Executor, writes?: InlineStatement) => {
      try {
        return await this.writeAtVersion(executor, { tenantId, streamId }, afterVersion, events, 'try', writes);
      } catch (error) {
        if (uniqueViolationConstraint(error) === STREAM_VERSION_CONSTRAINT) throw new SnapshotBehind();
        throw (writes && inlineFailure(writes, request, error)) ?? error;
      }
    };
    /** Set when the first try wrote nothing: others appended first, or held the lock. */
    let wasted = false;
    const tryFirst = async (): Promise<CatchingUpAppendResult> => {
      if (statement !== undefined) {
        // one statement, the inline projections' writes in it; when it wrote nothing, the locked
        // path in a transaction of its own; when it went stale (an inline rebuild of the stream
        // committed between its snapshot and its lock), the first try again in a transaction
        const first = await tryAtVersion(this.db, statement);
        if (first.appended) return { missed: [], appended: first.appended };
        if (!first.stale) {
          wasted = true;
          return this.db.transaction().execute((trx) => this.catchUpLocked(trx, request, events));
        }
      }
      return this.db.transaction().execute(async (trx): Promise<CatchingUpAppendResult> => {
        const first = await tryAtVersion(trx);
        if (first.appended) {
          await applyInline(trx, this.inline, first.appended.events);
          return { missed: [], appended: first.appended };
        }
        wasted = true;
        // the locked path, in this transaction (its statement takes the lock again at once when the first try took it)
        return this.catchUpLocked(trx, request, events);
      });
    };
    let outcome: CatchingUpAppendResult;
    if (this.contention.contended(streamId)) {
      outcome = await this.db.transaction().execute((trx) => this.catchUpLocked(trx, request, events));
    } else {
      try {
        outcome = await tryFirst();
      } catch (error) {
        if (!(error instanceof SnapshotBehind)) throw error;
        // nothing written, the first try's transaction over: the locked path in a new one
        wasted = true;
        outcome = await this.db.transaction().execute((trx) => this.catchUpLocked(trx, request, events));
      }
    }
    if (wasted || outcome.missed.length > 0) this.contention.record(streamId);
    if (outcome.appended) this.onAppended?.(outcome.appended);
    return outcome;
  }

  /**
   * The locked path of `appendCatchingUp` in `trx`: one statement (`appendLocked`) takes the
   * stream's lock, held to the commit, and then, in a snapshot taken after the lock (it reads what
   * every append before the lock committed), inserts `events` (validated) when nothing came past
   * `afterVersion` (and the stream is the tenant's), else inserts nothing and returns what came;
   * `rebuild` then makes the append from it, at the head.
   */
  private async catchUpLocked(trx: Transaction<Database>, request: CatchingUpAppendRequest, events: NewEvent[]): Promise<CatchingUpAppendResult> {
    const { tenantId, streamId, afterVersion } = request;
    let head: HeadRead = { atTenant: null, missed: [] };
    const appended = await this.insertAt(trx, { tenantId, streamId }, afterVersion, events, async (values) => {
      const r = await appendLocked(trx, { tenantId, streamId, version: afterVersion, rows: values });
      head = r;
      return r.written;
    });
    if (appended) return { missed: [], appended };
    if (afterVersion > 0 && head.atTenant === null) throw new ConcurrencyError(streamId, afterVersion, 0);
    const missed = head.missed.map(toStoredEvent);
    if ((afterVersion > 0 && head.atTenant !== tenantId) || missed.some((e) => e.tenantId !== tenantId)) throw new StreamTenantMismatchError(streamId);
    const rebuilt = request.rebuild(missed).map(validateEvent);
    if (rebuilt.length === 0) return { missed, appended: null };
    return { missed, appended: await this.insertAt(trx, { tenantId, streamId }, afterVersion + missed.length, rebuilt) };
  }

  /**
   * Inserts `events` (validated) at `version + 1...` of a stream locked by `trx`, with the inline
   * projections and `alongside`. `write` makes the insert (default: a plain one); when it writes
   * none (a conditional insert that found the head moved), nothing else is done: null.
   */
  private async insertAt(
    trx: Transaction<Database>,
    request: Pick<AppendRequest, 'tenantId' | 'streamId' | 'idempotency' | 'alongside'>,
    version: number,
    events: NewEvent[],
    write: (values: EventRow[]) => Promise<WrittenRow[]> = (values) =>
      trx.insertInto('events').values(values).returning(['global_position', 'stream_version', 'recorded_at']).execute(),
  ): Promise<AppendResult | null> {
    const metadataOf = (event: NewEvent, index: number) => metadataWithKey(request, event, index);
    const values = events.map((e, i): EventRow => ({
      tenant_id: request.tenantId,
      stream_id: request.streamId,
      stream_version: version + i + 1,
      type: e.type,
      data: JSON.stringify(e.data),
      metadata: JSON.stringify(metadataOf(e, i)),
    }));
    const rows = await write(values);
    if (rows.length === 0) return null;
    rows.sort((a, b) => a.stream_version - b.stream_version);
    const stored = storedAsWritten(request, events, rows);
    if (this.inline.length > 0) await applyInline(trx, this.inline, stored);
    if (request.alongside) await request.alongside(trx);
    return {
      version: version + events.length,
      firstPosition: Number(rows[0].global_position),
      lastPosition: Number(rows[rows.length - 1].global_position),
      events: stored,
    };
  }

  /** The tenant's append made under this idempotency key, or null (keys of other tenants are not seen). */
  async findByIdempotencyKey(tenantId: string, key: string): Promise<IdempotentAppend | null> {
    const row = await this.db
      .selectFrom('events')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      // the key name is inlined (not a parameter) so the expression matches the unique index
      .where(sql<string>`metadata->>${sql.lit(IDEMPOTENCY_KEY_FIELD)}`, '=', key)
      .executeTakeFirst();
    if (!row) return null;
    const event = toStoredEvent(row);
    const requestHash = event.metadata[IDEMPOTENCY_REQUEST_HASH_FIELD];
    return { event, requestHash: typeof requestHash === 'string' ? requestHash : '' };
  }

  /**
   * A session's events from its earliest pending input on (the `executions` view, applied inline
   * with every append, says which), in one read (`pendingSuffixQuery`). When none is pending: from its latest input on
   * (the execution that just ended and anything after it, not every turn the session ever had);
   * the whole stream when the view holds none of the session's inputs. `after` is the stream
   * version just before the first event returned. Only the tenant's: another tenant's session id
   * reads nothing (an empty stream).
   */
  async readPendingSuffix<T extends EventType = never>(
    tenantId: string,
    streamId: string,
    options: { lastBefore?: T; alongside?: RawBuilder<unknown> } = {},
  ): Promise<{ after: number; events: StoredEvent[]; lastBefore?: Extract<StoredEvent, { type: T }> | null; alongside?: unknown }> {
    const before = options.lastBefore;
    const alongside = options.alongside;
    const { rows } = await pendingSuffixQuery(tenantId, streamId, options).execute(this.db);
    const suffix = rows.filter((r) => r.before_suffix === false);
    const result = {
      after: suffix.length > 0 ? suffix[0].stream_version - 1 : 0,
      events: suffix.map(toStoredEvent),
      ...(alongside === undefined ? {} : { alongside: rows.find((r) => r.before_suffix === null)?.alongside ?? null }),
    };
    if (before === undefined) return result;
    const last = rows.find((r) => r.before_suffix === true);
    return { ...result, lastBefore: last ? (toStoredEvent(last) as Extract<StoredEvent, { type: T }>) : null };
  }

  /** Events of one stream with version > afterVersion, in order. */
  /**
   * What a branch session inherits from its parent (`readInheritedStory`): the parent's story up to
   * the branch point, in front of the branch's own events for a fold (audit, replay); none for a
   * session that is not a branch.
   */
  async inheritedStory(sessionId: string): Promise<StoredEvent[]> {
    return readInheritedStory(this.db, await this.readStream(sessionId, 0, 1));
  }

  /** The whole stream as an audit of `turnId` folds it: other turns' request bodies left out (`readStreamForTurn`). */
  readStreamForTurn(streamId: string, turnId: string): Promise<StoredEvent[]> {
    return readStreamForTurn(this.db, streamId, turnId);
  }

  async readStream(streamId: string, afterVersion = 0, limit?: number): Promise<StoredEvent[]> {
    const { rows } = await (limit === undefined
      ? readStreamPrecompiled(this.db, { streamId, afterVersion })
      : readStreamLimitPrecompiled(this.db, { streamId, afterVersion, limit }));
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

  /**
   * Events after `cursor` in the log's read order (transaction_id, global_position), at most
   * `limit`, and only those whose transaction is below `pg_snapshot_xmin(pg_current_snapshot())`,
   * the oldest transaction still running when the query starts. Why a reader never misses or
   * repeats an event, with appends to different streams committing in any order:
   * - every transaction below xmin has ended, so the events with such a transaction id are all
   *   there is and ever will be (an aborted one's are gone for good);
   * - a transaction that is running, or starts later, gets its id (at its first write) at or
   *   above xmin, so every event still to come sorts after every event returned here;
   * - the cursor only moves over returned events, hence never past an event still to come.
   * A long transaction anywhere in the cluster holds readers back (they lag, they don't skip).
   * Served by the index on (transaction_id, global_position), or on
   * (log_partition, transaction_id, global_position) with `partition`.
   */
  async readAfter(cursor: LogCursor, options: ReadAfterOptions): Promise<OrderedLogEntry[]> {
    const executor = options.executor ?? this.db;
    const params = { transactionId: cursor.transactionId, globalPosition: String(cursor.globalPosition), limit: options.limit };
    const { rows } = await (options.partition === undefined
      ? readAfterPrecompiled(executor, params)
      : readAfterPartitionPrecompiled(executor, { ...params, partition: options.partition }));
    return rows.map((row) => ({
      ...toLogEntry(row),
      cursor: { transactionId: String(row.transaction_id), globalPosition: Number(row.global_position) },
    }));
  }

  /**
   * `readAfter` of each of `reads` (a partition and a cursor in it; one partition may come twice, at
   * two cursors) in one statement (one round trip, not one each: issue 33), at most `limit` events
   * each, in the same order and under the same rule, all of one snapshot. Returns each read's
   * events, in the order of `reads`.
   *
   * With `types`, only events of those types come with their data and metadata: the others are
   * there (a cursor moves past them) but can't be decoded (`decode` throws). A projector's batch
   * holds every event of its partition, and most of a turn's are of types no async projection
   * reads (issue 33: they were sent as JSON and parsed for nothing).
   */
  async readAfterEach(
    reads: readonly { partition: number; cursor: LogCursor }[],
    options: { limit: number; executor?: Executor; types?: readonly string[] },
  ): Promise<OrderedLogEntry[][]> {
    const read: OrderedLogEntry[][] = reads.map(() => []);
    if (reads.length === 0) return read;
    const executor = options.executor ?? this.db;
    const { types } = options;
    const parameters = [
      reads.map((r) => r.partition),
      reads.map((r) => r.cursor.transactionId),
      reads.map((r) => String(r.cursor.globalPosition)),
      options.limit,
      types ?? null,
    ];
    const { rows } = await executor.executeQuery(
      textStatement<EventsRowRead & { transaction_id: string; k: number; text_field: string | null }, Database>(executor, READ_AFTER_EACH, parameters),
    );
    for (const row of rows) {
      const field = Object.hasOwn(TEXT_FIELDS, row.type) ? TEXT_FIELDS[row.type] : undefined;
      // the text field back in the data: node-pg parsed the rest, the text came unescaped (one parse less)
      const data = row.text_field !== null && row.data !== null && field !== undefined ? { ...(row.data as object), [field]: row.text_field } : row.data;
      const entry = types === undefined || types.includes(row.type) ? toLogEntry({ ...row, data }) : { ...toLogEntry(row), decode: notRead(row.type) };
      read[Number(row.k) - 1].push({ ...entry, cursor: { transactionId: String(row.transaction_id), globalPosition: Number(row.global_position) } });
    }
    return read;
  }

  /** The global position of the last event in the log (0 when it is empty). */
  async headPosition(executor: Executor = this.db): Promise<number> {
    const row = await executor
      .selectFrom('events')
      .select(sql<string | null>`max(global_position)`.as('head'))
      .executeTakeFirst();
    return Number(row?.head ?? 0);
  }

  /**
   * The stream's last event of one type before a version (null: none), in one indexed read (the
   * stream's events read backwards from that version).
   */
  async lastOfType<T extends EventType>(streamId: string, type: T, beforeVersion: number): Promise<Extract<StoredEvent, { type: T }> | null> {
    const row = await this.db
      .selectFrom('events')
      .selectAll()
      .where('stream_id', '=', streamId)
      .where('stream_version', '<', beforeVersion)
      .where('type', '=', type)
      .orderBy('stream_version', 'desc')
      .limit(1)
      .executeTakeFirst();
    return row ? (toStoredEvent(row) as Extract<StoredEvent, { type: T }>) : null;
  }

  /** The tenant that owns a stream, or null when the stream does not exist. */
  async streamTenant(streamId: string): Promise<string | null> {
    const row = await this.db.selectFrom('events').select('tenant_id').where('stream_id', '=', streamId).where('stream_version', '=', 1).executeTakeFirst();
    return row?.tenant_id ?? null;
  }

  /** The stream's version and owning tenant in one read (version 0 and null when it does not exist). */
  async streamHead(streamId: string): Promise<{ version: number; tenantId: string | null }> {
    return streamHead(this.db, streamId);
  }

  async streamVersion(streamId: string): Promise<number> {
    return (await streamHead(this.db, streamId)).version;
  }
}

/** An `events` row as `select *` reads it. */
type EventsRowRead = Selectable<EventsTable>;

/** The reader's query (exported for the EXPLAIN test). */
export function readAfterQuery(executor: Executor, cursor: LogCursor, options: Omit<ReadAfterOptions, 'executor'>) {
  return executor
    .selectFrom('events')
    .selectAll()
    .$if(options.partition !== undefined, (q) => q.where('log_partition', '=', options.partition!))
    .where(sql<boolean>`(transaction_id, global_position) > (${cursor.transactionId}::xid8, ${String(cursor.globalPosition)}::bigint)`)
    .where(sql<boolean>`transaction_id < pg_snapshot_xmin(pg_current_snapshot())`)
    .orderBy('transaction_id')
    .orderBy('global_position')
    .limit(options.limit);
}

/**
 * The fields of an event's data that hold JSON text (a request body, a reply), by type. In the log
 * each is a JSON string inside the jsonb, so it comes escaped in the data's JSON text and is
 * unescaped by the parse of the whole data, before a projection parses it again (a request body is
 * most of a turn's bytes: ~10 KB per `llm.calling`, 10 per Emberback turn; issue 33).
 * `readAfterEach` (the projector's read) takes each out of the data in SQL and reads it as text.
 */
export const TEXT_FIELDS: Readonly<Record<string, string>> = { 'llm.calling@1': 'body', 'llm.responded@1': 'reply' };

/** `(case when <the type's text field is a string> then <then> else <otherwise> end)`: only a string is taken out (anything else stays, for the schema to refuse). */
const byTextField = (then: (field: string) => string, otherwise: string) =>
  `(case ${Object.entries(TEXT_FIELDS)
    .map(([type, field]) => `when e.type = '${type}' and jsonb_typeof(e.data->'${field}') = 'string' then ${then(field)}`)
    .join(' ')} else ${otherwise} end)`;

/** `$5::text[] is null or e.type = any($5::text[])`: a row of the read's types (null: every type). */
const OF_TYPES = `($5::text[] is null or e.type = any($5::text[]))`;

/**
 * `readAfterEach`'s statement (exported for the EXPLAIN test): `readAfterQuery` of a partition for
 * each (partition, cursor) of the arrays `$1`, `$2`, `$3` (the k-th read's rows numbered `k`), `$4`
 * rows each at most, by the partition's index; one text for any number of reads. `$5`: the types
 * whose data and metadata are read (null: every type's; another type's row has them null). A
 * `TEXT_FIELDS` field comes in `text_field`, out of the data.
 */
export const READ_AFTER_EACH = `select r.k::int as k, e.global_position, e.tenant_id, e.stream_id, e.stream_version, e.type,
    case when ${OF_TYPES} then ${byTextField((f) => `e.data - '${f}'`, 'e.data')} end as data,
    case when ${OF_TYPES} then ${byTextField((f) => `e.data->>'${f}'`, 'null')} end as text_field,
    case when ${OF_TYPES} then e.metadata end as metadata,
    e.recorded_at, e.transaction_id, e.log_partition
  from unnest($1::int[], $2::xid8[], $3::bigint[]) with ordinality as r(log_partition, transaction_id, global_position, k)
  cross join lateral (
    select * from events
    where log_partition = r.log_partition
      and (transaction_id, global_position) > (r.transaction_id, r.global_position)
      and transaction_id < pg_snapshot_xmin(pg_current_snapshot())
    order by transaction_id, global_position
    limit $4
  ) e
  order by r.k, e.transaction_id, e.global_position`;

/** A stream's events after a version, in order (exported for the EXPLAIN test): the unique (stream_id, stream_version) index. */
export function readStreamQuery(executor: Executor, streamId: string, afterVersion: number, limit?: number) {
  return executor
    .selectFrom('events')
    .selectAll()
    .where('stream_id', '=', streamId)
    .where('stream_version', '>', afterVersion)
    .orderBy('stream_version')
    .$if(limit !== undefined, (q) => q.limit(limit!));
}

/** A stream's last version and tenant (exported for the EXPLAIN test): the same index, read backwards. */
export function streamHeadQuery(executor: Executor, streamId: string) {
  return executor.selectFrom('events').select(['stream_version', 'tenant_id']).where('stream_id', '=', streamId).orderBy('stream_version', 'desc').limit(1);
}

/**
 * `readAfterQuery` and `readStreamQuery` compiled once each (`precompiled`): the projector reads
 * after a cursor in every shard with work on every pass, and a run catches up on its stream with
 * `readStream` (issue 33: kysely's build and compile of the same select, each time).
 */
type ReadAfterParams = { transactionId: string; globalPosition: string; limit: number };
const readAfterOf = (db: Executor, p: ReadAfterParams, partition?: number) =>
  // the placeholders stand where the values go (`precompiled`): the position is sent as text, as readAfterQuery sends it
  readAfterQuery(
    db,
    { transactionId: p.transactionId, globalPosition: p.globalPosition as unknown as number },
    { limit: p.limit, ...(partition === undefined ? {} : { partition }) },
  );
const readAfterPrecompiled = precompiled<Database, ReadAfterParams, EventsRowRead & { transaction_id: string }>(
  ['transactionId', 'globalPosition', 'limit'],
  (db, p) => readAfterOf(db, p),
);
const readAfterPartitionPrecompiled = precompiled<Database, ReadAfterParams & { partition: number }, EventsRowRead & { transaction_id: string }>(
  ['transactionId', 'globalPosition', 'limit', 'partition'],
  (db, p) => readAfterOf(db, p, p.partition),
);
const readStreamPrecompiled = precompiled<Database, { streamId: string; afterVersion: number }, EventsRowRead>(['streamId', 'afterVersion'], (db, p) =>
  readStreamQuery(db, p.streamId, p.afterVersion),
);
const readStreamLimitPrecompiled = precompiled<Database, { streamId: string; afterVersion: number; limit: number }, EventsRowRead>(
  ['streamId', 'afterVersion', 'limit'],
  (db, p) => readStreamQuery(db, p.streamId, p.afterVersion, p.limit),
);

async function streamHead(executor: Executor, streamId: string): Promise<{ version: number; tenantId: string | null }> {
  const row = await streamHeadQuery(executor, streamId).executeTakeFirst();
  return { version: row?.stream_version ?? 0, tenantId: row?.tenant_id ?? null };
}

/** An `events` row as an append writes it (data and metadata as JSON text). */
interface EventRow {
  tenant_id: string;
  stream_id: string;
  stream_version: number;
  type: string;
  data: string;
  metadata: string;
}

/** What an insert returns of each row it wrote. */
interface WrittenRow {
  global_position: string;
  stream_version: number;
  recorded_at: Date | string;
}

/** What `appendLocked` read of the stream: the tenant of the row at its version (null: none), and the rows past it. */
interface HeadRead {
  atTenant: string | null;
  missed: EventsRow[];
}

/** An event's metadata as appended: the first event of an idempotent append carries its key and request hash. */
function metadataWithKey(request: Pick<AppendRequest, 'idempotency'>, event: NewEvent, index: number): Record<string, unknown> {
  return index === 0 && request.idempotency
    ? { ...event.metadata, [IDEMPOTENCY_KEY_FIELD]: request.idempotency.key, [IDEMPOTENCY_REQUEST_HASH_FIELD]: request.idempotency.requestHash }
    : (event.metadata ?? {});
}

/** The events of an append as stored, from the rows the insert returned (in the events' order). */
function storedAsWritten(
  request: Pick<AppendRequest, 'tenantId' | 'streamId' | 'idempotency'>,
  events: readonly NewEvent[],
  written: readonly { global_position: string; stream_version: number; recorded_at: string | Date }[],
): StoredEvent[] {
  return events.map(
    (e, i) =>
      ({
        globalPosition: Number(written[i].global_position),
        tenantId: request.tenantId,
        streamId: request.streamId,
        streamVersion: written[i].stream_version,
        type: e.type,
        data: e.data,
        metadata: metadataWithKey(request, e, i),
        recordedAt: new Date(written[i].recorded_at).toISOString(),
      }) as StoredEvent,
  );
}

/**
 * The first try of `appendCatchingUp` met, on the unique (stream_id, stream_version) index, an
 * append that committed between its statement's snapshot and the lock: nothing was written, and
 * its transaction (if any) must end before the locked path.
 */
class SnapshotBehind extends Error {}

/** The constraint (or unique index) a unique violation names, or null for any other error. */
function uniqueViolationConstraint(error: unknown): string | null {
  if (typeof error !== 'object' || error === null) return null;
  const { code, constraint } = error as { code?: unknown; constraint?: unknown };
  if (code !== '23505') return null;
  return typeof constraint === 'string' ? constraint : '';
}
