/**
 * The summary budgets (spec §1 "History compaction", the budget table), in the framework's token
 * estimate. `effective` is the smaller input capacity of the story and the fast model, each after
 * its response reserve.
 *
 * | budget         | target                         | lower | upper                               |
 * |----------------|--------------------------------|-------|-------------------------------------|
 * | one segment    | 25 % of its source's estimate  | 128   | min(4 % of the effective window, 2,048) |
 * | all summaries  | 12 % of the effective window   | 128   | 8,192, and never more than the window |
 *
 * Where the bounds cross (a window under 3,200 tokens, whose 4 % is below 128) the lower bound of a
 * segment wins; a segment is never more than all summaries together.
 */
export const MIN_BUDGET = 128;
export const SEGMENT_MAX = 2048;
export const TOTAL_MAX = 8192;
/** At most this many summary segments are kept (the oldest are merged to stay within it). */
export const MAX_SEGMENTS = 8;

/** `part` percent of `value`, rounded down (integers: no floating point drift at the bounds). */
const percent = (value: number, part: number) => Math.floor((Math.max(0, Math.floor(value)) * part) / 100);

/** All summaries together: 12 % of the effective window, at least 128, at most 8,192 and never more than the window. */
export function totalBudget(effective: number): number {
  const window = Math.max(0, Math.floor(effective));
  return Math.min(Math.max(MIN_BUDGET, percent(window, 12)), TOTAL_MAX, window);
}

/** The most one segment may hold: 4 % of the effective window, at most 2,048, at least 128, never more than {@link totalBudget}. */
export function segmentCap(effective: number): number {
  return Math.min(Math.max(MIN_BUDGET, Math.min(percent(effective, 4), SEGMENT_MAX)), totalBudget(effective));
}

/** One new segment: 25 % of its source's estimate, within [128, {@link segmentCap}]. */
export function segmentBudget(sourceTokens: number, effective: number): number {
  return Math.min(Math.max(MIN_BUDGET, percent(sourceTokens, 25)), segmentCap(effective));
}

/**
 * The new segment's budget when old segments exist: at most half of the total, so that merging
 * the old segments always has the other half (the "small window" split; with a window of 2,134
 * tokens or more half the total is above every segment budget and this changes nothing).
 */
export function newSegmentBudget(sourceTokens: number, effective: number, hasOldSegments: boolean): number {
  const budget = segmentBudget(sourceTokens, effective);
  return hasOldSegments ? Math.min(budget, Math.max(1, Math.floor(totalBudget(effective) / 2))) : budget;
}
