import { type BucketSpec, decision, type RateDecision } from './rate-decision';

/** One process's tokens of a tenant's shared bucket, taken from it ahead of the requests they answer. */
interface Lease {
  /** Whole tokens not handed out yet. */
  tokens: number;
  /** What the shared bucket held once the lease was taken out of it. */
  left: number;
  /** When (the process's clock, ms) the lease was taken. */
  at: number;
  ratePerSecond: number;
  burst: number;
}

/** Leases kept at most; past it the expired ones are forgotten (their tokens are lost until the bucket refills). */
const MAX_LEASES = 10_000;

/**
 * Token leases of the Redis buckets (issue 33: the API's CPU per request): a take on Redis may take
 * several tokens at once when the bucket holds many (the script takes a 64th of them, at most
 * `RedisRateLimiter`'s lease size), and the requests after it, in this process, spend them without a
 * round trip while the lease is fresh. The bucket is never overdrawn: a leased token was taken from
 * it. A lease expires after `lifetimeMs` (the headers it answers describe the bucket as it was then,
 * refilled since at the rate); what it did not use is given back with the next take (`giveBack`).
 * A bucket near empty leases one token per take: every request then asks Redis, as without leases.
 */
export class TokenLeases {
  private readonly leases = new Map<string, Lease>();

  constructor(private readonly options: { lifetimeMs: number; now?: () => number }) {}

  private now(): number {
    return this.options.now?.() ?? performance.now();
  }

  private usable(lease: Lease, bucket: BucketSpec, now: number): boolean {
    return lease.tokens >= 1 && now - lease.at < this.options.lifetimeMs && lease.ratePerSecond === bucket.ratePerSecond && lease.burst === bucket.burst;
  }

  /** A token of the tenant's fresh lease for this bucket: the request's decision; null when there is none (ask Redis). */
  take(bucket: BucketSpec): RateDecision | null {
    const now = this.now();
    const lease = this.leases.get(bucket.tenantId);
    if (!lease || !this.usable(lease, bucket, now)) return null;
    lease.tokens -= 1;
    return this.decided(lease, bucket, now);
  }

  /** The tokens of the tenant's lease that is no longer usable (expired, spent, another bucket spec), once: to give back with the take that replaces it. */
  giveBack(bucket: BucketSpec): number {
    const lease = this.leases.get(bucket.tenantId);
    if (!lease || this.usable(lease, bucket, this.now())) return 0;
    this.leases.delete(bucket.tenantId);
    return lease.tokens;
  }

  /**
   * Redis's answer to a take: `taken` tokens (0: refused), `left` in the bucket after it. One token is
   * this request's; the others (and any a lease still held, e.g. taken by a take that ran meanwhile) are the lease.
   */
  taken(bucket: BucketSpec, taken: number, left: number): RateDecision {
    if (taken < 1) return decision(false, left, bucket);
    const now = this.now();
    const lease: Lease = {
      tokens: (this.leases.get(bucket.tenantId)?.tokens ?? 0) + taken - 1,
      left,
      at: now,
      ratePerSecond: bucket.ratePerSecond,
      burst: bucket.burst,
    };
    this.leases.delete(bucket.tenantId); // re-inserted last: the pruning below forgets the oldest first
    if (lease.tokens >= 1) this.leases.set(bucket.tenantId, lease);
    if (this.leases.size > MAX_LEASES) this.forgetExpired(now);
    return this.decided(lease, bucket, now);
  }

  clear(): void {
    this.leases.clear();
  }

  /** The bucket as this process sees it: what it held at the lease, refilled since, plus the lease's tokens not handed out. */
  private decided(lease: Lease, bucket: BucketSpec, now: number): RateDecision {
    const refilled = Math.min(bucket.burst, lease.left + (Math.max(0, now - lease.at) * bucket.ratePerSecond) / 1000);
    return decision(true, Math.min(bucket.burst, refilled + lease.tokens), bucket);
  }

  private forgetExpired(now: number) {
    for (const [tenantId, lease] of this.leases) if (now - lease.at >= this.options.lifetimeMs) this.leases.delete(tenantId);
  }
}
