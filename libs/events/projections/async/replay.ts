import { LOG_PARTITIONS, LOG_START, type EventStore, type LogCursor } from '../../event-store';
import type { Projection } from '../projection';
import { type ApplyContext, applyBatch } from './apply-batch';
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
 * transaction (a long one would hold back every reader's horizon), renewing its leases as it goes.
 * Other projections, and turns, go on meanwhile. The shards are given back at the end.
 */
export async function replayProjection(work: ReplayWork): Promise<ReplayedProjection> {
  const { apply, projection } = work;
  const name = projection.name;
  const lease = { names: [name], owner: apply.owner, leaseMs: apply.leaseMs };
  await ensureShards(apply.db, [name]);
  try {
    await takeProjection(apply.db, { name, owner: apply.owner, leaseMs: apply.leaseMs });
    await apply.db.transaction().execute(async (trx) => {
      if ((await resetCursors(trx, { name, owner: apply.owner, to: LOG_START })) !== LOG_PARTITIONS) throw new ReplayInterruptedError(name, null);
      for (const table of projection.tables) await trx.deleteFrom(table).execute();
    });
    let read = 0;
    const failingShards: number[] = [];
    for (let shard = 0; shard < LOG_PARTITIONS; shard++) {
      let cursor: LogCursor = LOG_START;
      let shardRead = 0;
      for (;;) {
        const entries = await work.store.readAfter(cursor, { partition: shard, limit: work.batchSize });
        if (entries.length === 0) break;
        const outcome = await applyBatch(apply, { projection, shard, from: cursor, failedPosition: null }, entries);
        if (outcome.kind === 'lost') throw new ReplayInterruptedError(name, shard);
        shardRead += entries.length;
        cursor = outcome.cursor;
        if (outcome.kind === 'failed') {
          failingShards.push(shard);
          break;
        }
        await renewLeases(apply.db, lease);
        if (entries.length < work.batchSize) break;
        work.onProgress?.({ projection: name, shard, read: shardRead, cursor, done: false });
      }
      read += shardRead;
      work.onProgress?.({ projection: name, shard, read: shardRead, cursor, done: true });
    }
    return { name, read, failingShards };
  } finally {
    await releaseShards(apply.db, { owner: apply.owner, names: [name] });
  }
}
