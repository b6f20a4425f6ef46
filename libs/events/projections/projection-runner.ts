import { type Kysely, type Selectable, sql, type Transaction } from 'kysely';
import { truncateText } from '../../text';
import { EventStore, type LogEntry, toLogEntry } from '../event-store';
import type { Database, ProjectionFailuresTable } from '../schema';
import { executionsProjection } from './executions';
import { summariesProjection } from './summaries';
import type { Projection } from './projection';
import { turnMessagesProjection } from './turn-messages';

/**
 * The views a turn reads, in the order a catch-up applies them. `executions` comes last: a reader
 * that sees an execution `committed` then finds its messages and summaries (every catch-up applies
 * all of them up to one head position, taken at its start, so no projection is ever ahead of one
 * listed before it). Until they are applied inline with the append, this runner keeps them; the
 * async projections (trace_events, prefix_reports) are run by the AsyncProjector.
 */
export const defaultProjections: readonly Projection[] = [turnMessagesProjection, summariesProjection, executionsProjection];

const BATCH = 500;
/** Failures listed per projection by `status()` (the count is always exact). */
const LISTED_FAILURES = 20;
/** Stopped streams one catch-up retries at most per projection (catch-ups run inside turns). */
const RETRIES_PER_CATCH_UP = 10;

export interface ProjectionLogger {
  log(message: string): void;
  warn(message: string): void;
}

export interface ProjectionRunnerOptions {
  projections?: readonly Projection[];
  /** Where a stopped or recovered stream is reported, one line each. Default: the console. */
  logger?: ProjectionLogger;
  /** Delay before the first retry of a stopped stream; doubles with each failed retry. Default 1 s. */
  retryDelayMs?: number;
  /** Upper bound of the retry delay. Default 5 minutes. */
  maxRetryDelayMs?: number;
}

/** A stream a projection stopped at: the event it could not apply, and why. */
export interface ProjectionFailure {
  streamId: string;
  tenantId: string;
  /** Global position of the event the projection could not apply. */
  globalPosition: number;
  eventType: string;
  error: string;
  /** Tries so far (the first one included). */
  attempts: number;
  /** When the projection first stopped at this stream (ISO 8601). */
  since: string;
  nextRetryAt: string;
}

export interface ProjectionStatus {
  name: string;
  /** Global position the projection has read up to (events of stopped streams are held back). */
  position: number;
  /** Events in the log after `position`. */
  lag: number;
  state: 'running' | 'failing';
  /** Number of streams the projection stopped at. */
  failing: number;
  /** The oldest of them, at most 20. */
  failures: ProjectionFailure[];
}

/** Log lines of a transaction, written once it has committed. */
interface Pending {
  logs: { level: 'log' | 'warn'; line: string }[];
}

type FailureRow = Selectable<ProjectionFailuresTable>;

/**
 * Applies events to projections after each one's checkpoint. The checkpoint row is locked for the
 * batch and moved in the same transaction as the rows it covers, so concurrent runners in many
 * processes never apply an event twice and a crash loses nothing.
 *
 * Every projection here is per stream (session). An event a projection cannot apply stops that
 * projection for that stream only: the failure is recorded (`projection_failures`) and logged in
 * one line, the projection goes on with every other stream and holds back the stream's later
 * events. Stopped streams are retried on later catch-ups with backoff (and at once on a process's
 * first catch-up, so a restart with fixed code catches up); a retry applies the held-back events
 * in log order. A batch is applied as it comes; when an event throws, the batch is rolled back and
 * applied again with each event in its own savepoint, so nothing of the failing event is written
 * and the rest of the batch commits.
 */
export class ProjectionRunner {
  private readonly store: EventStore;
  private readonly projections: readonly Projection[];
  private readonly logger: ProjectionLogger;
  private readonly retryDelayMs: number;
  private readonly maxRetryDelayMs: number;
  /** Whether this process has made every stopped stream due once, regardless of backoff. */
  private madeDue = false;

  constructor(
    private readonly db: Kysely<Database>,
    options: ProjectionRunnerOptions = {},
  ) {
    this.store = new EventStore(db);
    this.projections = options.projections ?? defaultProjections;
    this.logger = options.logger ?? console;
    this.retryDelayMs = options.retryDelayMs ?? 1000;
    this.maxRetryDelayMs = options.maxRetryDelayMs ?? 5 * 60_000;
  }

  get names(): string[] {
    return this.projections.map((p) => p.name);
  }

  /**
   * Brings every projection up to the end of the log and retries stopped streams that are due;
   * returns the number of events applied. A projection that cannot apply an event does not make
   * this throw (see the class comment); a database that cannot be reached does.
   */
  async catchUp(): Promise<number> {
    await this.ensureCheckpoints();
    if (!this.madeDue) {
      // a new process may run fixed code: every stopped stream is due now
      await this.db
        .updateTable('projection_failures')
        .set({ next_retry_at: sql<Date>`now()` })
        .where('projection', 'in', this.names)
        .execute();
      this.madeDue = true;
    }
    // one head for every projection: a later one never gets past an event an earlier one has not read
    const through = await this.store.headPosition();
    let applied = 0;
    for (const projection of this.projections) applied += await this.runBatches(projection, through);
    // then the stopped streams that are due (their held-back events all precede the checkpoint)
    return applied + (await this.retryStopped({ limitPerProjection: RETRIES_PER_CATCH_UP }));
  }

  /** Retries every stopped stream now, whatever its backoff; returns the number of events applied. */
  async retryNow(): Promise<number> {
    const applied = await this.catchUp();
    return applied + (await this.retryStopped({ force: true }));
  }

  /** Drops every projection's rows and failures and rebuilds them from the log in one transaction. */
  async replay(onProgress?: (projection: string, position: number) => void): Promise<number> {
    await this.ensureCheckpoints();
    const pending: Pending = { logs: [] };
    const applied = await this.db.transaction().execute(async (trx) => {
      let total = 0;
      for (const projection of this.projections) {
        await lockCheckpoint(trx, projection.name);
        for (const table of projection.tables) await trx.deleteFrom(table).execute();
        await trx.deleteFrom('projection_failures').where('projection', '=', projection.name).execute();
        await trx.updateTable('projection_checkpoints').set({ position: '0' }).where('name', '=', projection.name).execute();
        for (;;) {
          const { read, applied: n } = await this.applyBatch(trx, projection, pending, 'guarded');
          total += n;
          if (read < BATCH) break;
          onProgress?.(projection.name, await checkpoint(trx, projection.name));
        }
      }
      return total;
    });
    this.flush(pending);
    return applied;
  }

  /** Per projection: position, lag behind the log head, and the streams it stopped at. */
  async status(): Promise<ProjectionStatus[]> {
    // read-only: a projection with no checkpoint row yet is at position 0
    const head = await this.store.headPosition();
    const checkpoints = new Map((await this.db.selectFrom('projection_checkpoints').selectAll().execute()).map((c) => [c.name, Number(c.position)]));
    const counts = new Map(
      (
        await this.db
          .selectFrom('projection_failures')
          .select(['projection', sql<string>`count(*)`.as('n')])
          .groupBy('projection')
          .execute()
      ).map((r) => [r.projection, Number(r.n)]),
    );
    const listed = await sql<FailureRow>`
      select * from (
        select f.*, row_number() over (partition by projection order by first_seen_at, global_position) as rn
        from projection_failures f
      ) t where rn <= ${LISTED_FAILURES} order by projection, first_seen_at, global_position`.execute(this.db);
    return this.projections.map((p) => {
      const position = checkpoints.get(p.name) ?? 0;
      const failing = counts.get(p.name) ?? 0;
      return {
        name: p.name,
        position,
        lag: Math.max(0, head - position),
        state: failing > 0 ? 'failing' : 'running',
        failing,
        failures: listed.rows.filter((r) => r.projection === p.name).map(toFailure),
      };
    });
  }

  /** Projections that are stopped at this stream (the turn path refuses to read them). */
  async stoppedAt(streamId: string): Promise<(ProjectionFailure & { projection: string })[]> {
    const rows = await this.db.selectFrom('projection_failures').selectAll().where('stream_id', '=', streamId).orderBy('projection').execute();
    return rows.map((r) => ({ projection: r.projection, ...toFailure(r) }));
  }

  private async runBatches(projection: Projection, through: number): Promise<number> {
    let applied = 0;
    for (;;) {
      const pending: Pending = { logs: [] };
      let batch: { read: number; applied: number };
      try {
        batch = await this.db.transaction().execute((trx) => this.applyBatch(trx, projection, pending, 'direct', through));
      } catch (error) {
        if (!(error instanceof BatchFailed)) throw error;
        // rolled back whole: again, each event in its own savepoint
        batch = await this.db.transaction().execute((trx) => this.applyBatch(trx, projection, pending, 'per-event', through));
      }
      this.flush(pending);
      applied += batch.applied;
      if (batch.read < BATCH) return applied;
    }
  }

  /**
   * Applies the next batch, skipping the streams this projection is stopped at, and moves the
   * checkpoint past it. `direct` applies the events as they come (nothing extra on the usual path)
   * and throws `BatchFailed` when one throws, for the caller to roll back and run `per-event`:
   * each event in its own savepoint, so the failing event's stream stops and the others go on.
   * `guarded` (replay, one long transaction) tries the batch in one savepoint, then `per-event`.
   */
  private async applyBatch(
    trx: Transaction<Database>,
    projection: Projection,
    pending: Pending,
    mode: 'direct' | 'guarded' | 'per-event',
    /** No event after this position (the catch-up's head); none: to the end of the log. */
    through?: number,
  ): Promise<{ read: number; applied: number }> {
    const from = await lockCheckpoint(trx, projection.name);
    const entries = await readBatch(trx, projection.name, from, through);
    if (entries.length === 0) return { read: 0, applied: 0 };
    const live = entries.filter((e) => !e.heldBack);
    const applyAll = async () => {
      for (const entry of live) await applyOne(projection, trx, entry);
    };
    let applied = live.length;
    if (mode === 'direct') {
      await applyAll().catch((error: unknown) => {
        throw new BatchFailed(error);
      });
    } else if (mode === 'per-event' || !(await succeeds(inSavepoint(trx, 'projection_batch', applyAll)))) {
      applied = 0;
      const stopped = new Set<string>();
      for (const entry of live) {
        if (stopped.has(entry.streamId)) continue;
        try {
          await inSavepoint(trx, 'projection_event', () => applyOne(projection, trx, entry));
          applied++;
        } catch (error) {
          stopped.add(entry.streamId);
          await this.recordFailure(trx, projection, entry, error, pending);
        }
      }
    }
    await trx
      .updateTable('projection_checkpoints')
      .set({ position: String(entries[entries.length - 1].globalPosition) })
      .where('name', '=', projection.name)
      .execute();
    return { read: entries.length, applied };
  }

  /**
   * Retries stopped streams that are due (every one with `force`), the longest waiting first, at
   * most `limitPerProjection` per projection; returns the number of events applied.
   */
  private async retryStopped(options: { force?: boolean; limitPerProjection?: number }): Promise<number> {
    const due = await sql<{ projection: string; stream_id: string }>`
      select projection, stream_id from (
        select projection, stream_id, next_retry_at, global_position,
               row_number() over (partition by projection order by next_retry_at, global_position) as rn
        from projection_failures
        where projection in (${sql.join(this.names)}) ${options.force ? sql`` : sql`and next_retry_at <= now()`}
      ) t where rn <= ${options.limitPerProjection ?? 2 ** 31 - 1} order by next_retry_at, global_position`.execute(this.db);
    const byName = new Map(this.projections.map((p) => [p.name, p]));
    let applied = 0;
    for (const { projection, stream_id } of due.rows) {
      const pending: Pending = { logs: [] };
      applied += await this.db.transaction().execute((trx) => this.retryStream(trx, byName.get(projection)!, stream_id, pending, options.force ?? false));
      this.flush(pending);
    }
    return applied;
  }

  /**
   * Applies a stopped stream's held-back events (from the failed one up to the checkpoint), in
   * order. All apply: the stream runs again. One throws: the ones before it stay applied, the
   * failure moves to it, and the next retry waits longer.
   */
  private async retryStream(trx: Transaction<Database>, projection: Projection, streamId: string, pending: Pending, force: boolean): Promise<number> {
    const through = await lockCheckpoint(trx, projection.name);
    const failure = await trx
      .selectFrom('projection_failures')
      .selectAll()
      .where('projection', '=', projection.name)
      .where('stream_id', '=', streamId)
      .$if(!force, (q) => q.where('next_retry_at', '<=', sql<Date>`now()`))
      .forUpdate()
      .executeTakeFirst();
    if (!failure) return 0; // another process retried it meanwhile
    let after = Number(failure.global_position) - 1;
    let applied = 0;
    for (;;) {
      const entries = await this.store.readLog(after, BATCH, { executor: trx, streamId, throughPosition: through });
      for (const entry of entries) {
        try {
          await inSavepoint(trx, 'projection_retry', () => applyOne(projection, trx, entry));
          applied++;
        } catch (error) {
          await this.recordFailure(trx, projection, entry, error, pending, failure);
          return applied;
        }
      }
      if (entries.length < BATCH) break;
      after = entries[entries.length - 1].globalPosition;
    }
    await trx.deleteFrom('projection_failures').where('projection', '=', projection.name).where('stream_id', '=', streamId).execute();
    pending.logs.push({
      level: 'log',
      line: `projection ${projection.name} caught up on stream ${streamId} (tenant ${failure.tenant_id}): ${applied} held-back event(s) applied after ${failure.attempts} failed attempt(s)`,
    });
    return applied;
  }

  private async recordFailure(
    trx: Transaction<Database>,
    projection: Projection,
    entry: LogEntry,
    error: unknown,
    pending: Pending,
    previous?: { attempts: number },
  ): Promise<void> {
    const attempts = (previous?.attempts ?? 0) + 1;
    const delayMs = Math.min(this.maxRetryDelayMs, this.retryDelayMs * 2 ** Math.min(attempts - 1, 30));
    const message = describe(error);
    const nextRetry = sql<Date>`now() + ${delayMs} * interval '1 millisecond'`;
    await trx
      .insertInto('projection_failures')
      .values({
        projection: projection.name,
        stream_id: entry.streamId,
        tenant_id: entry.tenantId,
        global_position: String(entry.globalPosition),
        event_type: entry.type,
        error: message,
        attempts,
        next_retry_at: nextRetry,
      })
      .onConflict((oc) =>
        oc.columns(['projection', 'stream_id']).doUpdateSet({
          global_position: String(entry.globalPosition),
          event_type: entry.type,
          error: message,
          attempts,
          last_seen_at: sql<Date>`now()`,
          next_retry_at: nextRetry,
        }),
      )
      .execute();
    pending.logs.push({
      level: 'warn',
      line:
        `projection ${projection.name} stopped at global position ${entry.globalPosition} (${entry.type}) of stream ${entry.streamId} ` +
        `(tenant ${entry.tenantId}), attempt ${attempts}: ${message}; other streams go on, retry in ${Math.round(delayMs / 1000)} s`,
    });
  }

  /** Logs once the transaction that recorded them has committed. */
  private flush(pending: Pending) {
    for (const { level, line } of pending.logs) {
      if (level === 'warn') this.logger.warn(line);
      else this.logger.log(line);
    }
    pending.logs.length = 0;
  }

  private async ensureCheckpoints() {
    await this.db
      .insertInto('projection_checkpoints')
      .values(this.projections.map((p) => ({ name: p.name, position: '0' })))
      .onConflict((oc) => oc.column('name').doNothing())
      .execute();
  }
}

function toFailure(r: Omit<FailureRow, 'projection'>): ProjectionFailure {
  return {
    streamId: r.stream_id,
    tenantId: r.tenant_id,
    globalPosition: Number(r.global_position),
    eventType: r.event_type,
    error: r.error,
    attempts: r.attempts,
    since: new Date(r.first_seen_at).toISOString(),
    nextRetryAt: new Date(r.next_retry_at).toISOString(),
  };
}

const succeeds = (work: Promise<void>): Promise<boolean> =>
  work.then(
    () => true,
    () => false,
  );

/** Applies one log entry when the projection handles its type (decoded only then). */
async function applyOne(projection: Projection, trx: Transaction<Database>, entry: LogEntry): Promise<void> {
  if (!(projection.handles as readonly string[]).includes(entry.type)) return;
  await projection.applyBatch(trx, [entry.decode()]);
}

/** Runs `work` in a savepoint: released when it succeeds, rolled back (and rethrown) when it throws. */
async function inSavepoint(trx: Transaction<Database>, name: string, work: () => Promise<void>): Promise<void> {
  await sql.raw(`savepoint ${name}`).execute(trx);
  try {
    await work();
  } catch (error) {
    await sql.raw(`rollback to savepoint ${name}`).execute(trx);
    await sql.raw(`release savepoint ${name}`).execute(trx);
    throw error;
  }
  await sql.raw(`release savepoint ${name}`).execute(trx);
}

/** One line: the error's code (PostgreSQL SQLSTATE or engine code) and message, at most 500 characters. */
function describe(error: unknown): string {
  const code = typeof error === 'object' && error !== null && 'code' in error ? String((error as { code: unknown }).code) : null;
  const message = (error instanceof Error ? `${error.name}: ${error.message}` : String(error)).replace(/\s+/g, ' ').trim();
  const line = code ? `${message} (code ${code})` : message;
  const short = truncateText(line, 499);
  return short === line ? line : `${short}…`;
}

/** The next events after `after`, each marked when its stream is stopped in this projection. */
async function readBatch(trx: Transaction<Database>, projection: string, after: number, through?: number): Promise<(LogEntry & { heldBack: boolean })[]> {
  let query = trx
    .selectFrom('events as e')
    .selectAll('e')
    .select((eb) =>
      eb
        .exists(
          eb.selectFrom('projection_failures as f').select('f.stream_id').where('f.projection', '=', projection).whereRef('f.stream_id', '=', 'e.stream_id'),
        )
        .as('held_back'),
    )
    .where('e.global_position', '>', String(after))
    .orderBy('e.global_position')
    .limit(BATCH);
  if (through !== undefined) query = query.where('e.global_position', '<=', String(through));
  const rows = await query.execute();
  return rows.map((row) => ({ ...toLogEntry(row), heldBack: Boolean(row.held_back) }));
}

/** An event of a `direct` batch threw: the batch's transaction is rolled back and run again event by event. */
class BatchFailed extends Error {
  constructor(readonly failure: unknown) {
    super('a projection could not apply an event of the batch');
  }
}

async function lockCheckpoint(trx: Transaction<Database>, name: string): Promise<number> {
  const row = await sql<{ position: string }>`select position from projection_checkpoints where name = ${name} for update`.execute(trx);
  return Number(row.rows[0]?.position ?? 0);
}

async function checkpoint(trx: Transaction<Database>, name: string): Promise<number> {
  const row = await trx.selectFrom('projection_checkpoints').select('position').where('name', '=', name).executeTakeFirst();
  return Number(row?.position ?? 0);
}
