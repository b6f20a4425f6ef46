import { type Kysely, sql, type Transaction } from 'kysely';
import type { LogCursor, OrderedLogEntry } from '../../event-store';
import type { Database } from '../../schema';
import type { Projection } from '../projection';
import { describeError, errorCodeOf } from './describe-error';
import { recordQuarantine } from './quarantine';
import { isTransientFailure } from './transient';
import { advanceCursor, recordFailure } from './shard-rows';
import type { ProjectorLogger } from './types';

export interface ApplyContext {
  db: Kysely<Database>;
  owner: string;
  leaseMs: number;
  retryDelayMs: number;
  maxRetryDelayMs: number;
  /** Failed attempts at one event after which it is quarantined (skipped, recorded) and the shard goes on. */
  quarantineAfter: number;
  logger: ProjectorLogger;
}

export interface ApplyTarget {
  projection: Projection;
  shard: number;
  /** Where the projection's row stands (entries after it are applied). */
  from: LogCursor;
  /** The row's failure before this batch (to log a failure once and a recovery once). */
  failedPosition: number | null;
  /**
   * Runs in the transaction that applies `entries` and moves the cursor past them (a replay resolves
   * the quarantine records of the events that apply now): it commits with them or not at all.
   */
  onApplied?: (trx: Transaction<Database>, entries: readonly OrderedLogEntry[]) => Promise<void>;
}

export type ApplyOutcome =
  /** The cursor moved to `cursor`; `applied` events of the projection's types were applied. */
  | { kind: 'advanced'; cursor: LogCursor; applied: number }
  /** The row is not ours any more (another owner, or a replay, took it): nothing was written. */
  | { kind: 'lost' }
  /**
   * An event could not be applied: the events before it are applied, the shard stops at it.
   * `transient`: the failure was not the event's (a deadlock, the database away): it never counts toward quarantine.
   */
  | { kind: 'failed'; cursor: LogCursor; applied: number; failedPosition: number; transient: boolean }
  /**
   * An event failed its `quarantineAfter`-th attempt: the events before it are applied, it is
   * recorded in `projection_quarantine` and the cursor is past it (the shard goes on after it).
   */
  | { kind: 'quarantined'; cursor: LogCursor; applied: number; quarantineId: string };

/** The compare-and-set of the cursor found the row moved or taken: the transaction rolls back. */
export class ShardLost extends Error {
  constructor() {
    super('the shard was taken by another owner');
  }
}

export const handles = (projection: Projection, entry: OrderedLogEntry) => (projection.handles as readonly string[]).includes(entry.type);

/**
 * Applies `entries` (read once for every projection at this cursor) to one projection: its events
 * and the new cursor in one transaction, the cursor by compare-and-set. When the batch throws it
 * is rolled back and applied again event by event (each in a savepoint) to find the event that
 * fails: the ones before it commit, the shard records the failure and stops at it.
 */
export async function applyBatch(ctx: ApplyContext, target: ApplyTarget, entries: readonly OrderedLogEntry[]): Promise<ApplyOutcome> {
  if (entries.length === 0) return { kind: 'advanced', cursor: target.from, applied: 0 };
  const mine = entries.filter((e) => handles(target.projection, e));
  const to = entries[entries.length - 1].cursor;
  try {
    await ctx.db.transaction().execute(async (trx) => {
      if (mine.length > 0)
        await target.projection.applyBatch(
          trx,
          mine.map((e) => e.decode()),
        );
      await target.onApplied?.(trx, entries);
      await moveCursor(ctx, trx, target, to);
    });
    logRecovery(ctx, target);
    return { kind: 'advanced', cursor: to, applied: mine.length };
  } catch (error) {
    if (error instanceof ShardLost) return { kind: 'lost' };
    return applyEventByEvent(ctx, target, entries);
  }
}

/** A row that was failing applied its event: one line (the failure was logged once too). */
export function logRecovery(ctx: ApplyContext, target: Pick<ApplyTarget, 'projection' | 'shard' | 'failedPosition'>): void {
  if (target.failedPosition === null) return;
  ctx.logger.log(`projection ${target.projection.name} shard ${target.shard} runs again: the event at global position ${target.failedPosition} is applied`);
}

async function moveCursor(ctx: ApplyContext, trx: Transaction<Database>, target: ApplyTarget, to: LogCursor) {
  const moved = await advanceCursor(trx, {
    projection: target.projection.name,
    shard: target.shard,
    owner: ctx.owner,
    from: target.from,
    to,
    leaseMs: ctx.leaseMs,
  });
  if (!moved) throw new ShardLost();
}

/**
 * The events one by one, each in a savepoint, in one transaction: the ones before the first that fails
 * commit with the cursor after them; the failure is recorded on the row (and quarantined after
 * `quarantineAfter` attempts). For a batch that failed as a whole.
 */
export async function applyEventByEvent(ctx: ApplyContext, target: ApplyTarget, entries: readonly OrderedLogEntry[]): Promise<ApplyOutcome> {
  let failed: { entry: OrderedLogEntry; error: unknown } | null = null;
  let good = 0;
  let applied = 0;
  try {
    await ctx.db.transaction().execute(async (trx) => {
      for (const entry of entries) {
        if (handles(target.projection, entry)) {
          await sql`savepoint projector_event`.execute(trx);
          try {
            await target.projection.applyBatch(trx, [entry.decode()]);
          } catch (error) {
            await sql`rollback to savepoint projector_event`.execute(trx);
            failed = { entry, error };
            break;
          }
          await sql`release savepoint projector_event`.execute(trx);
          applied++;
        }
        good++;
      }
      await target.onApplied?.(trx, entries.slice(0, good));
      if (good > 0) await moveCursor(ctx, trx, target, entries[good - 1].cursor);
    });
  } catch (error) {
    if (error instanceof ShardLost) return { kind: 'lost' };
    throw error;
  }
  const cursor = good > 0 ? entries[good - 1].cursor : target.from;
  if (failed === null) return { kind: 'advanced', cursor, applied }; // the batch failed once, not again
  const { entry, error } = failed as { entry: OrderedLogEntry; error: unknown };
  const message = describeError(error);
  const attempts = await recordFailure(ctx.db, {
    projection: target.projection.name,
    shard: target.shard,
    owner: ctx.owner,
    globalPosition: entry.globalPosition,
    eventType: entry.type,
    error: message,
    errorCode: errorCodeOf(error),
    retryDelayMs: ctx.retryDelayMs,
    maxRetryDelayMs: ctx.maxRetryDelayMs,
  });
  if (attempts === null) return { kind: 'lost' };
  // a failure that is not the event's (deadlock, disk full, the database away) is retried, never quarantined
  const transient = isTransientFailure(error);
  if (!transient && attempts >= ctx.quarantineAfter)
    return quarantine(ctx, target, { entry, from: cursor, applied, attempts, message, errorCode: errorCodeOf(error) });
  // once per failure: when the shard starts failing, or stops at another event
  if (attempts === 1 || target.failedPosition !== entry.globalPosition) {
    ctx.logger.warn(
      `projection ${target.projection.name} shard ${target.shard} stopped at global position ${entry.globalPosition} (${entry.type}) ` +
        `of stream ${entry.streamId} (tenant ${entry.tenantId}): ${message}; other shards go on, retries back off`,
    );
  }
  return { kind: 'failed', cursor, applied, failedPosition: entry.globalPosition, transient };
}

/** Records the event as skipped and moves the cursor past it, in one transaction (the cursor by compare-and-set from `from`). */
async function quarantine(
  ctx: ApplyContext,
  target: ApplyTarget,
  failed: { entry: OrderedLogEntry; from: LogCursor; applied: number; attempts: number; message: string; errorCode: string },
): Promise<ApplyOutcome> {
  const { entry } = failed;
  let id = '';
  try {
    await ctx.db.transaction().execute(async (trx) => {
      id = await recordQuarantine(trx, {
        projection: target.projection.name,
        shard: target.shard,
        cursor: entry.cursor,
        eventType: entry.type,
        tenantId: entry.tenantId,
        streamId: entry.streamId,
        errorCode: failed.errorCode,
        error: failed.message,
        attempts: failed.attempts,
      });
      await moveCursor(ctx, trx, { ...target, from: failed.from }, entry.cursor);
    });
  } catch (error) {
    if (error instanceof ShardLost) return { kind: 'lost' };
    throw error;
  }
  ctx.logger.warn(
    `projection ${target.projection.name} shard ${target.shard} skipped the event at global position ${entry.globalPosition} (${entry.type}) ` +
      `of stream ${entry.streamId} (tenant ${entry.tenantId}) after ${failed.attempts} failed attempt(s): quarantined as #${id} ` +
      `(GET /admin/quarantine, npm run quarantine); the shard goes on: ${failed.message}`,
  );
  return { kind: 'quarantined', cursor: entry.cursor, applied: failed.applied, quarantineId: id };
}
