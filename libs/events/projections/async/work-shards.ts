import type { EventStore, LogCursor } from '../../event-store';
import type { Projection } from '../projection';
import type { ApplyContext } from './apply-batch';
import { applyShards, type ShardGroup } from './apply-shards';
import type { ShardRow } from './shard-rows';

export interface ShardsWork {
  store: EventStore;
  apply: ApplyContext;
  batchSize: number;
  /** Batches this pass applies to a shard at most (a backlog waits for the next pass). */
  maxBatches: number;
  /** Per shard, its rows this projector holds and may apply now, with their projections. */
  shards: ReadonlyMap<number, readonly { projection: Projection; row: ShardRow }[]>;
  /** Asked before each round: true ends the pass there (the projector stops; the rest waits for whoever holds the rows next). */
  shouldStop?: () => boolean;
}

interface Lane {
  shard: number;
  projection: Projection;
  cursor: LogCursor;
  failedPosition: number | null;
}

const key = (lane: Lane) => `${lane.shard}:${lane.cursor.transactionId}:${lane.cursor.globalPosition}`;

/**
 * Brings the shards' projections forward, batch by batch. Projections of a shard at the same cursor
 * (the usual case) share each batch, read once; the batches of a round are read in one statement
 * (`readAfterEach`: one round trip, not one per shard), and the batches of every shard are applied in one
 * transaction that moves all their cursors in one statement (see applyShards). A projection at
 * another cursor (after a replay of it, or stopped at an event) reads its own.
 * A projection that fails or loses the row drops out; the others go on (one that quarantines an event
 * goes on after it). Returns the events applied (of the projections' types) and the events the
 * cursors moved past.
 */
export async function workShards(work: ShardsWork): Promise<{ applied: number; moved: number }> {
  let lanes: Lane[] = [...work.shards].flatMap(([shard, rows]) =>
    rows.map(({ projection, row }) => ({ shard, projection, cursor: row.cursor, failedPosition: row.failing ? row.failedPosition : null })),
  );
  let applied = 0;
  let moved = 0;
  for (let batch = 0; batch < work.maxBatches && lanes.length > 0 && !work.shouldStop?.(); batch++) {
    const byCursor = new Map<string, Lane[]>();
    for (const lane of lanes) byCursor.set(key(lane), [...(byCursor.get(key(lane)) ?? []), lane]);
    // every shard's batch (one per cursor) in one read
    const reads = [...byCursor.values()].map((group) => ({ partition: group[0].shard, cursor: group[0].cursor, lanes: group }));
    // only the events the lanes' projections read come with their data (the others only move the cursors)
    const types = [...new Set(lanes.flatMap((lane) => lane.projection.handles))];
    const batches = await work.store.readAfterEach(reads, { limit: work.batchSize, types });
    const groups: (Omit<ShardGroup, 'lanes'> & { lanes: Lane[] })[] = [];
    for (const [i, { partition: shard, cursor, lanes: group }] of reads.entries()) {
      const entries = batches[i];
      if (entries.length > 0) groups.push({ shard, from: cursor, lanes: group, entries }); // else caught up
    }
    const outcomes = await applyShards(work.apply, groups);
    const next: Lane[] = [];
    for (const [g, group] of groups.entries()) {
      const { entries } = group;
      for (const [i, lane] of group.lanes.entries()) {
        const outcome = outcomes[g][i];
        if (outcome.kind === 'lost') continue;
        applied += outcome.applied;
        if (outcome.kind === 'advanced') moved += entries.length;
        if (outcome.kind === 'advanced' && entries.length === work.batchSize) next.push({ ...lane, cursor: outcome.cursor, failedPosition: null });
        if (outcome.kind === 'quarantined') {
          // past the skipped event: the rest of this batch (and what follows) in the next round
          moved += entries.findIndex((e) => e.globalPosition === outcome.cursor.globalPosition) + 1;
          next.push({ ...lane, cursor: outcome.cursor, failedPosition: null });
        }
      }
    }
    lanes = next;
  }
  return { applied, moved };
}
