import type { LogCursor, OrderedLogEntry } from '../../event-store';
import type { Projection } from '../projection';
import { type ApplyContext, type ApplyOutcome, handles, logRecovery, ShardLost } from './apply-batch';
import { applyGroup, type GroupLane } from './apply-group';
import { advanceShardCursors } from './shard-rows';

/** Projections of one shard whose rows all stand at `from`, with the batch read after it. */
export interface ShardGroup {
  shard: number;
  from: LogCursor;
  lanes: readonly GroupLane[];
  entries: readonly OrderedLogEntry[];
}

/**
 * Applies the batches of several shards (each read once for its projections) in ONE transaction:
 * each projection once, with its events of every shard (each shard's in log order, shard after
 * shard), then every cursor in one compare-and-set statement. A pass over a worker's shards thereby
 * costs one BEGIN/COMMIT, one statement per projection and one cursor update, not that per shard.
 *
 * Failure isolation is that of one transaction per shard: when anything in the shared one fails (a
 * projection throws, a row was lost) it is rolled back whole and every shard is applied alone, as
 * `applyGroup` does (which in turn isolates each projection). A failure's attempts, backoff and
 * quarantine are recorded only there, so they count exactly as they do without the shared
 * transaction. Returns, per group in order, one outcome per lane.
 */
export async function applyShards(ctx: ApplyContext, groups: readonly ShardGroup[]): Promise<ApplyOutcome[][]> {
  const alone = async () => {
    const outcomes: ApplyOutcome[][] = [];
    for (const g of groups) outcomes.push(await applyGroup(ctx, { shard: g.shard, from: g.from, lanes: g.lanes }, g.entries));
    return outcomes;
  };
  if (groups.length < 2 || groups.some((g) => g.entries.length === 0)) return alone();
  const mine = groups.map((g) => g.lanes.map((lane) => g.entries.filter((e) => handles(lane.projection, e))));
  // each projection's events of every shard, the projections in the lanes' order (one may write rows another reads)
  const events = new Map<Projection, OrderedLogEntry[]>();
  groups.forEach((g, i) => g.lanes.forEach((lane, j) => events.set(lane.projection, [...(events.get(lane.projection) ?? []), ...mine[i][j]])));
  const moves = groups.map((g) => ({
    projections: g.lanes.map((l) => l.projection.name),
    shard: g.shard,
    from: g.from,
    to: g.entries[g.entries.length - 1].cursor,
  }));
  try {
    await ctx.db.transaction().execute(async (trx) => {
      for (const [projection, entries] of events) {
        if (entries.length > 0)
          await projection.applyBatch(
            trx,
            entries.map((e) => e.decode()),
          );
      }
      const moved = await advanceShardCursors(trx, { owner: ctx.owner, leaseMs: ctx.leaseMs, moves });
      if (moved !== moves.reduce((n, m) => n + m.projections.length, 0)) throw new ShardLost();
    });
  } catch {
    // rolled back whole: each shard alone, as if it had never shared the transaction
    return alone();
  }
  groups.forEach((g) => g.lanes.forEach((lane) => logRecovery(ctx, { projection: lane.projection, shard: g.shard, failedPosition: lane.failedPosition })));
  return groups.map((g, i) => g.lanes.map((_, j) => ({ kind: 'advanced', cursor: moves[i].to, applied: mine[i][j].length })));
}
