/** The median of a sample (the upper one of the middle two). */
export function median(values: readonly number[]): number {
  return percentile(values, 0.5);
}

/** The value at fraction `p` (0..1) of the sorted sample, nearest rank. */
export function percentile(values: readonly number[], p: number): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(s.length * p))];
}
