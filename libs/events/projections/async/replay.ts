import type { Transaction } from 'kysely';
import { LOG_PARTITIONS, LOG_START, type EventStore, type LogCursor, type OrderedLogEntry } from '../../event-store';
import type { Database } from '../../schema';
import type { Projection } from '../projection';
import { type ApplyContext, applyBatch } from './apply-batch';
import { QuarantineRecords, resolveQuarantine } from './quarantine';
import { ensureShards, releaseShards, renewLeases, resetCursors, takeProjection } from './shard-rows';
import type { ReplayedProjection, ReplayProgress } from './types';

export interface ReplayWork {
  store: EventStore;
  apply: ApplyContext;
  batchSize: number;
  projection: Projection;
  onProgress?: (progress: ReplayProgress) => void;
}

/** A replay found its projection's rows taken by someone else (another replay): it stops. */
export class ReplayInterruptedError extends Error {
  readonly code = 'REPLAY_INTERRUPTED';
  constructor(projection: string, shard: number | null) {
    super(`replay of ${projection}: ${shard === null ? 'its shards were' : `shard ${shard} was`} taken by another owner`);
  }
}

/**
 * Rebuilds one async projection without blocking anyone: takes every shard of it (an owner working
 * one loses it at its next compare-and-set), empties its tables and puts its cursors at the start of
 * the log in one short transaction, then applies the log shard by shard, each batch its own short
 * transaction (a long one would hold back every reader's horizon), renewing its leases as it goes
 * (every quarter lease, not after each batch: one statement fewer per batch).
 * Other projections, and turns, go on meanwhile. The shards are given back at the end. An event that
 * still cannot be applied is tried `quarantineAfter` times, then quarantined (recorded, skipped) and
 * the replay goes on; a quarantined event that applies now has its record resolved. The result lists
 * the projection's unresolved quarantined events.
 */
export async function replayProjection(work: ReplayWork): Promise<ReplayedProjection> {
  const { apply, projection } = work;
  const name = projection.name;
  const lease = { names: [name], owner: apply.owner, leaseMs: apply.leaseMs };
  const quarantine = new QuarantineRecords(apply.db);
  await ensureShards(apply.db, [name]);
  try {
    // every row of the projection keeps its lease: renewed each eighth of a lease from when it is
    // granted, checked after each batch and after a transient failure's pause, so a slow batch or a
    // pause just after a check still leaves most of the lease (the reset below may take long on a
    // big table; a batch's own move renews its row's)
    let renewedAt = Date.now();
    const renewIfDue = async () => {
      if (Date.now() - renewedAt < apply.leaseMs / 8) return;
      await renewLeases(apply.db, lease);
      renewedAt = Date.now();
    };
    await takeProjection(apply.db, { name, owner: apply.owner, leaseMs: apply.leaseMs });
    await apply.db.transaction().execute(async (trx) => {
      if ((await resetCursors(trx, { name, owner: apply.owner, to: LOG_START })) !== LOG_PARTITIONS) throw new ReplayInterruptedError(name, null);
      for (const table of projection.tables) await trx.deleteFrom(table).execute();
    });
    // records of this projection a replay may now resolve (the event applies after all)
    const unresolved = new Set((await quarantine.list({ state: 'unresolved', projections: [name] })).map((q) => q.globalPosition));
    let read = 0;
    let resolved = 0;
    for (let shard = 0; shard < LOG_PARTITIONS; shard++) {
      let cursor: LogCursor = LOG_START;
      let failedPosition: number | null = null;
      let shardRead = 0;
      for (;;) {
        const entries = await work.store.readAfter(cursor, { partition: shard, limit: work.batchSize });
        if (entries.length === 0) break;
        // the quarantine records of the events that apply now are resolved in the transaction that applies them
        let resolving = 0;
        const onApplied = async (trx: Transaction<Database>, applied: readonly OrderedLogEntry[]) => {
          const positions = applied.filter((e) => unresolved.has(e.globalPosition)).map((e) => e.globalPosition);
          // set, not added: only the transaction that commits counts (one that rolled back is run again)
          resolving = positions.length > 0 ? await resolveQuarantine(trx, { projection: name, globalPositions: positions }) : 0;
        };
        const outcome = await applyBatch(apply, { projection, shard, from: cursor, failedPosition, onApplied }, entries);
        if (outcome.kind === 'lost') throw new ReplayInterruptedError(name, shard);
        resolved += resolving;
        // the events up to the outcome's cursor are applied (or, the last of them, quarantined)
        const through = outcome.kind === 'advanced' ? entries.length : entries.findIndex((e) => e.globalPosition === outcome.cursor.globalPosition) + 1;
        shardRead += through;
        cursor = outcome.cursor;
        // a failing event is tried again at once until it applies or is quarantined (quarantineAfter attempts);
        // a transient failure (a deadlock, the database away) never quarantines: it is tried again after a pause
        failedPosition = outcome.kind === 'failed' ? outcome.failedPosition : null;
        await renewIfDue();
        if (outcome.kind === 'failed' && outcome.transient) {
          await new Promise((r) => setTimeout(r, Math.min(apply.retryDelayMs, apply.maxRetryDelayMs)));
          await renewIfDue();
        }
        if (outcome.kind === 'advanced' && entries.length < work.batchSize) break;
        if (outcome.kind === 'advanced') work.onProgress?.({ projection: name, shard, read: shardRead, cursor, done: false });
      }
      read += shardRead;
      work.onProgress?.({ projection: name, shard, read: shardRead, cursor, done: true });
    }
    return { name, read, resolved, quarantined: await quarantine.list({ state: 'unresolved', projections: [name] }) };
  } finally {
    await releaseShards(apply.db, { owner: apply.owner, names: [name] });
  }
}
