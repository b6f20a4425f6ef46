import type IORedis from 'ioredis';
import type { Logger } from '../logging/logger';
import { redisClient } from '../redis/load-ioredis';
import { TokenLeases } from './token-leases';
import { type BucketSpec, decision, type RateDecision, type RateLimiter } from './rate-decision';

export type { BucketSpec, RateDecision, RateLimiter } from './rate-decision';

/** The embedded default's buckets (one process: the API and the worker share it). */
export class MemoryRateLimiter implements RateLimiter {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();

  constructor(private readonly now: () => number = () => performance.now()) {}

  take(bucket: BucketSpec): Promise<RateDecision> {
    return Promise.resolve(this.takeAtOnce(bucket));
  }

  /** Every take is at once here (the buckets are this process's). */
  takeAtOnce(bucket: BucketSpec): RateDecision {
    const now = this.now();
    const held = this.buckets.get(bucket.tenantId);
    let tokens = held ? Math.min(bucket.burst, held.tokens + (Math.max(0, now - held.at) * bucket.ratePerSecond) / 1000) : bucket.burst;
    const allowed = tokens >= 1;
    if (allowed) tokens -= 1;
    // a full bucket is the same as none: forgotten, so the map holds only tenants seen lately
    if (tokens >= bucket.burst) this.buckets.delete(bucket.tenantId);
    else this.buckets.set(bucket.tenantId, { tokens, at: now });
    if (this.buckets.size > 100_000) this.forgetFull(now, bucket);
    return decision(allowed, tokens, bucket);
  }

  close(): Promise<void> {
    this.buckets.clear();
    return Promise.resolve();
  }

  /** Buckets refilled since (at the current bucket's rate: a bound, not exact). */
  private forgetFull(now: number, bucket: BucketSpec) {
    for (const [tenant, held] of this.buckets) if (held.tokens + ((now - held.at) * bucket.ratePerSecond) / 1000 >= bucket.burst) this.buckets.delete(tenant);
  }
}

/**
 * One atomic take on a tenant's bucket (a hash: tokens, ms of the last refill), on Redis's own clock
 * so every API process agrees: refill, give back what the caller's expired lease did not use
 * (ARGV[4], never past the burst), take a lease if there is a token (ARGV[3] at most, a 64th of the
 * tokens held, at least one), store, expire once it would be full.
 * Answers { tokens taken (0: refused), tokens left as text (a Lua number would be cut to an integer) }.
 */
const TAKE = `
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local most = tonumber(ARGV[3]) or 1
local back = tonumber(ARGV[4]) or 0
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local held = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = tonumber(held[1])
local at = tonumber(held[2])
if tokens == nil or at == nil then
  tokens = burst
elseif now > at then
  tokens = math.min(burst, tokens + (now - at) * rate / 1000)
else
  tokens = math.min(burst, tokens)
end
tokens = math.min(burst, tokens + back)
local taken = 0
if tokens >= 1 then
  taken = math.max(1, math.min(most, math.floor(tokens / 64)))
  tokens = tokens - taken
end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'at', tostring(now))
redis.call('PEXPIRE', KEYS[1], math.ceil((burst - tokens) / rate * 1000) + 1000)
return { taken, tostring(tokens) }
`;

/** The name `TAKE` is defined under on the connection (ioredis `defineCommand`: EVALSHA, EVAL only after NOSCRIPT). */
const TAKE_COMMAND = 'covelRateTake';
type TakingRedis = IORedis & {
  [TAKE_COMMAND]: (key: string, ratePerSecond: string, burst: string, most: string, back: string) => Promise<[number, string]>;
};

/** How long a take may wait on Redis before the request goes on without it (fail open). */
const REDIS_TAKE_TIMEOUT_MS = 250;

/** The most tokens one take leases (a bucket holding 64 times as many or more). */
const LEASE_TOKENS = 32;
/** How long a lease's tokens are spent before what is left goes back to the bucket. */
const LEASE_MS = 1_000;

export interface RedisRateLimiterOptions {
  redisUrl: string;
  prefix: string;
  logger: Pick<Logger, 'warn'>;
  /** The most tokens a take leases for this process's next requests (1: none, every request asks Redis). */
  leaseTokens?: number;
  leaseMs?: number;
}

/**
 * The buckets in Redis (`REDIS_URL`): one Lua script per take (by its SHA), shared by every API
 * process. A take leases tokens while the bucket holds many (`TokenLeases`): the requests after it
 * in this process spend them without a round trip.
 * Redis down or slow: the request goes on (fail open) and one warning is logged per outage; the
 * queue needs Redis too, so what would be limited cannot run meanwhile anyway.
 */
export class RedisRateLimiter implements RateLimiter {
  private connection: TakingRedis | null = null;
  private down = false;
  private readonly leases: TokenLeases;
  private readonly leaseTokens: number;

  constructor(private readonly options: RedisRateLimiterOptions) {
    this.leaseTokens = options.leaseTokens ?? LEASE_TOKENS;
    this.leases = new TokenLeases({ lifetimeMs: options.leaseMs ?? LEASE_MS });
  }

  /** A token of this process's fresh lease of the tenant's bucket, if it holds one. */
  takeAtOnce(bucket: BucketSpec): RateDecision | null {
    return this.leases.take(bucket);
  }

  async take(bucket: BucketSpec): Promise<RateDecision> {
    const leased = this.leases.take(bucket);
    if (leased) return leased;
    const back = this.leases.giveBack(bucket);
    try {
      const [taken, tokens] = await this.redis().covelRateTake(
        this.key(bucket.tenantId),
        String(bucket.ratePerSecond),
        String(bucket.burst),
        String(this.leaseTokens),
        String(back),
      );
      this.down = false;
      return this.leases.taken(bucket, Number(taken), Number(tokens));
    } catch (error) {
      if (!this.down) this.options.logger.warn(`rate limit not checked (Redis: ${String(error)}): requests pass unlimited until it answers`);
      this.down = true;
      return decision(true, bucket.burst, bucket);
    }
  }

  async close(): Promise<void> {
    this.leases.clear();
    const connection = this.connection;
    this.connection = null;
    await connection?.quit().catch(() => connection.disconnect());
  }

  private key(tenantId: string) {
    return `${this.options.prefix}:rate:${tenantId}`;
  }

  private redis(): TakingRedis {
    if (this.connection) return this.connection;
    const connection = redisClient(this.options.redisUrl, {
      maxRetriesPerRequest: 0,
      // also bounds a take queued while (re)connecting
      commandTimeout: REDIS_TAKE_TIMEOUT_MS,
    });
    connection.on('error', () => undefined); // reported by the failed take
    // EVALSHA per request (the script's text is sent again only when Redis answers NOSCRIPT)
    connection.defineCommand(TAKE_COMMAND, { numberOfKeys: 1, lua: TAKE });
    this.connection = connection as TakingRedis;
    return this.connection;
  }
}
