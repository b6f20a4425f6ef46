import type { LogCursor, OrderedLogEntry } from '../../event-store';
import type { Projection } from '../projection';
import { type ApplyContext, type ApplyOutcome, applyBatch, applyEventByEvent, handles, logRecovery, ShardLost } from './apply-batch';
import { advanceCursors } from './shard-rows';

export interface GroupLane {
  projection: Projection;
  /** The row's failure before this batch (see ApplyTarget). */
  failedPosition: number | null;
}

/**
 * Applies `entries` (read once) to several projections whose rows of `shard` all stand at `from`, in
 * ONE transaction: each projection's events in turn, then every cursor in one compare-and-set
 * statement. The usual pass thereby costs one BEGIN/COMMIT and one cursor update per shard, not one
 * of each per projection.
 *
 * Failure isolation is that of one transaction per projection: when anything in the shared one fails
 * (a projection throws, a row was lost) it is rolled back whole and every projection is applied in its
 * own transaction as `applyBatch` does, except that the projection that threw goes straight to event by
 * event (its batch has failed once). So one projection's failure never stops another, and its
 * attempts, backoff and quarantine are recorded exactly as they are for a projection alone. Returns
 * one outcome per lane, in order.
 */
export async function applyGroup(
  ctx: ApplyContext,
  group: { shard: number; from: LogCursor; lanes: readonly GroupLane[] },
  entries: readonly OrderedLogEntry[],
): Promise<ApplyOutcome[]> {
  const { shard, from, lanes } = group;
  const target = (lane: GroupLane) => ({ projection: lane.projection, shard, from, failedPosition: lane.failedPosition });
  if (lanes.length < 2 || entries.length === 0) {
    const outcomes: ApplyOutcome[] = [];
    for (const lane of lanes) outcomes.push(await applyBatch(ctx, target(lane), entries));
    return outcomes;
  }
  const mine = lanes.map((lane) => entries.filter((e) => handles(lane.projection, e)));
  const to = entries[entries.length - 1].cursor;
  let threw = null as number | null; // the lane whose projection threw (set in the callback)
  try {
    await ctx.db.transaction().execute(async (trx) => {
      for (const [i, lane] of lanes.entries()) {
        if (mine[i].length === 0) continue;
        try {
          await lane.projection.applyBatch(
            trx,
            mine[i].map((e) => e.decode()),
          );
        } catch (error) {
          threw = i;
          throw error;
        }
      }
      const moved = await advanceCursors(trx, {
        projections: lanes.map((l) => l.projection.name),
        shard,
        owner: ctx.owner,
        from,
        to,
        leaseMs: ctx.leaseMs,
      });
      if (moved !== lanes.length) throw new ShardLost();
    });
  } catch {
    // rolled back whole: each projection alone, as if it had never shared the transaction
    const outcomes: ApplyOutcome[] = [];
    for (const [i, lane] of lanes.entries()) outcomes.push(await (i === threw ? applyEventByEvent : applyBatch)(ctx, target(lane), entries));
    return outcomes;
  }
  for (const lane of lanes) logRecovery(ctx, target(lane));
  return lanes.map((_, i) => ({ kind: 'advanced', cursor: to, applied: mine[i].length }));
}
