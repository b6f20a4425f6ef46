import { MAX_SEGMENTS, MIN_BUDGET } from './budget';

export interface MergeLimits {
  /** All summaries together ({@link totalBudget}). */
  readonly total: number;
  /** One segment at most ({@link segmentCap}). */
  readonly cap: number;
  readonly maxSegments?: number;
}

/** Keep every old segment, or merge the `count` oldest into one of at most `budget` tokens. */
export type MergePlan = { readonly kind: 'keep' } | { readonly kind: 'merge'; readonly count: number; readonly budget: number };

const sum = (values: readonly number[]) => values.reduce((a, b) => a + b, 0);

/**
 * Decided after the new segment is written, by its actual length (`newTokens`), with the old
 * segments' lengths (`oldTokens`, oldest first):
 * - nothing is merged while the old segments and the new one fit the total budget and the segment
 *   cap (old segments' text stays stable);
 * - otherwise the fewest oldest continuous segments — at least two, unless there is only one, which
 *   is then written again shorter — are merged into one whose budget (what the total leaves besides
 *   the kept segments and the new one, at most one segment's cap, at most what they hold now or 128)
 *   is at least 128 (half the total, for a window whose total is under 256) and which brings the
 *   count within the cap;
 * - `null`: no merge makes room (cannot happen while the new segment holds at most half the total).
 */
export function planMerge(oldTokens: readonly number[], newTokens: number, limits: MergeLimits): MergePlan | null {
  const maxSegments = limits.maxSegments ?? MAX_SEGMENTS;
  const k = oldTokens.length;
  if (k + 1 <= maxSegments && sum(oldTokens) + newTokens <= limits.total) return { kind: 'keep' };
  const smallest = Math.max(1, Math.min(MIN_BUDGET, Math.floor(limits.total / 2)));
  for (let count = Math.min(2, k); count >= 1 && count <= k; count++) {
    if (k - count + 2 > maxSegments) continue;
    const replaced = sum(oldTokens.slice(0, count));
    const room = limits.total - newTokens - sum(oldTokens.slice(count));
    const budget = Math.min(limits.cap, room, Math.max(replaced, MIN_BUDGET));
    if (budget >= smallest) return { kind: 'merge', count, budget };
  }
  return null;
}
