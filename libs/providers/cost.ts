import type { ModelPrice } from './prices';

/** What a provider reported for one call (the `llm.responded@1` usage): input counts the cached tokens too. */
export interface TokenUsage {
  inputTokens: number;
  outputTokens: number;
  cachedInputTokens: number;
}

const PER_MILLION = 1_000_000;
/** Figures are kept to 1e-10 USD, so that sums of decimal prices read as decimals (0.3, not 0.30000000000000004). */
const PRECISION = 1e10;

/** A USD figure rounded to `PRECISION`. */
export const roundUsd = (usd: number): number => Math.round(usd * PRECISION) / PRECISION;

/**
 * The estimated USD of one call at list prices: cached input tokens at the cached price, the rest of
 * the input at the input price, output at the output price. Null when the model has no price.
 */
export function estimateCostUsd(usage: TokenUsage, price: ModelPrice | null): number | null {
  if (!price) return null;
  const cached = Math.min(usage.cachedInputTokens, usage.inputTokens);
  const uncached = usage.inputTokens - cached;
  return roundUsd((uncached * price.input + cached * price.cachedInput + usage.outputTokens * price.output) / PER_MILLION);
}

/** The sum of several estimates: null when any is null (an unpriced call leaves the total unknown), 0 for none. */
export function sumCostUsd(costs: Iterable<number | null>): number | null {
  let total = 0;
  for (const c of costs) {
    if (c === null) return null;
    total += c;
  }
  return roundUsd(total);
}
