/** One tenant's bucket: `ratePerSecond` tokens refilled each second, at most `burst` held. */
export interface BucketSpec {
  tenantId: string;
  ratePerSecond: number;
  burst: number;
}

/** The answer to one request: whether it may go on, and what the `RateLimit-*` headers say. */
export interface RateDecision {
  allowed: boolean;
  /** The bucket's capacity (`RateLimit-Limit`). */
  limit: number;
  /** Whole tokens left after this request (`RateLimit-Remaining`). */
  remaining: number;
  /** Seconds until the bucket is full again (`RateLimit-Reset`, the `t` of `RateLimit`). */
  resetSeconds: number;
  /** Seconds an empty bucket takes to fill (the `w` of `RateLimit-Policy`, with `limit` as its `q`); at least 1. */
  windowSeconds: number;
  /** Refused: seconds until the next token (`Retry-After`, at least 1); allowed: 0. */
  retryAfterSeconds: number;
}

/** Per-tenant token buckets: in memory (one process) or in Redis (every API process shares them). */
export interface RateLimiter {
  take(bucket: BucketSpec): Promise<RateDecision>;
  /**
   * The decision `take` would answer, at once and without a promise, when it needs no round trip (a
   * token this process holds: a lease, a bucket in memory); null: ask `take` (issue 33: CPU per request).
   */
  takeAtOnce(bucket: BucketSpec): RateDecision | null;
  close(): Promise<void>;
}

/** The decision for a bucket holding `tokens` (fractional) after the take. */
export function decision(allowed: boolean, tokens: number, bucket: Pick<BucketSpec, 'ratePerSecond' | 'burst'>): RateDecision {
  return {
    allowed,
    limit: bucket.burst,
    remaining: Math.max(0, Math.floor(tokens)),
    resetSeconds: Math.max(0, Math.ceil((bucket.burst - tokens) / bucket.ratePerSecond)),
    windowSeconds: Math.max(1, Math.ceil(bucket.burst / bucket.ratePerSecond)),
    retryAfterSeconds: allowed ? 0 : Math.max(1, Math.ceil((1 - tokens) / bucket.ratePerSecond)),
  };
}
