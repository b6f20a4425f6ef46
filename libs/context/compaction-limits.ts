/** At most this many saved summary segments per session (spec §1 "History compaction"). */
export const MAX_SUMMARY_SEGMENTS = 8;

/** The framework's upper limits on saved summaries, in estimated tokens (`estimateTokens`). */
export interface CompactionLimits {
  /** One segment's summary. */
  readonly segmentTokens: number;
  /** All saved summaries together, kept and new. */
  readonly totalTokens: number;
  readonly maxSegments: number;
}

/**
 * The upper limits of the spec's budget table for an effective window (the smaller input capacity
 * of the story and the fast model, each after its response reserve): a segment at most the smaller
 * of 4 % of the window and 2,048 (never below 128); all summaries at most 12 % of the window (never
 * below 128), at most 8,192 and never more than the window itself. A segment is never allowed more
 * than all summaries together.
 */
export function compactionLimits(effectiveWindow: number): CompactionLimits {
  const window = Math.max(0, Math.floor(effectiveWindow));
  // integer percentages: no floating point drift at the bounds (the default plugin computes the same table)
  const totalTokens = Math.min(Math.max(128, Math.floor((window * 12) / 100)), 8192, window);
  const segmentTokens = Math.min(Math.max(128, Math.min(Math.floor((window * 4) / 100), 2048)), totalTokens);
  return { segmentTokens, totalTokens, maxSegments: MAX_SUMMARY_SEGMENTS };
}
