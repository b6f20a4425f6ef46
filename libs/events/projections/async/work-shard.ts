import type { EventStore, LogCursor, OrderedLogEntry } from '../../event-store';
import type { Projection } from '../projection';
import type { ApplyContext } from './apply-batch';
import { applyGroup } from './apply-group';
import type { ShardRow } from './shard-rows';

export interface ShardWork {
  store: EventStore;
  apply: ApplyContext;
  batchSize: number;
  /** Batches this pass applies to the shard at most (other shards wait for the pass). */
  maxBatches: number;
  shard: number;
  /** The shard's rows this projector holds and may apply now, with their projections. */
  rows: { projection: Projection; row: ShardRow }[];
}

interface Lane {
  projection: Projection;
  cursor: LogCursor;
  failedPosition: number | null;
}

const key = (c: LogCursor) => `${c.transactionId}:${c.globalPosition}`;

/**
 * Brings the shard's projections forward, batch by batch. Projections at the same cursor (the usual
 * case) share each batch, read once, and apply it in one transaction that moves all their cursors in
 * one statement (see applyGroup); one at another cursor (after a replay of it, or stopped at an event)
 * reads its own.
 * A projection that fails or loses the row drops out; the others go on (one that quarantines an event
 * goes on after it). Returns the events applied
 * (of the projections' types) and the events the cursors moved past.
 */
export async function workShard(work: ShardWork): Promise<{ applied: number; moved: number }> {
  let lanes: Lane[] = work.rows.map(({ projection, row }) => ({ projection, cursor: row.cursor, failedPosition: row.failing ? row.failedPosition : null }));
  let applied = 0;
  let moved = 0;
  for (let batch = 0; batch < work.maxBatches && lanes.length > 0; batch++) {
    const groups = new Map<string, Lane[]>();
    for (const lane of lanes) groups.set(key(lane.cursor), [...(groups.get(key(lane.cursor)) ?? []), lane]);
    const next: Lane[] = [];
    for (const group of groups.values()) {
      const entries: OrderedLogEntry[] = await work.store.readAfter(group[0].cursor, { partition: work.shard, limit: work.batchSize });
      if (entries.length === 0) continue; // caught up
      // the group's projections in one transaction (each alone again when one of them fails)
      const outcomes = await applyGroup(work.apply, { shard: work.shard, from: group[0].cursor, lanes: group }, entries);
      for (const [i, lane] of group.entries()) {
        const outcome = outcomes[i];
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
