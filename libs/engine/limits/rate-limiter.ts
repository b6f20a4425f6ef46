import IORedis from 'ioredis';
import type { Logger } from '../logging/logger';

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

/** The embedded default's buckets (one process: the API and the worker share it). */
export class MemoryRateLimiter implements RateLimiter {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();

  constructor(private readonly now: () => number = () => performance.now()) {}

  take(bucket: BucketSpec): Promise<RateDecision> {
    const now = this.now();
    const held = this.buckets.get(bucket.tenantId);
    let tokens = held ? Math.min(bucket.burst, held.tokens + (Math.max(0, now - held.at) * bucket.ratePerSecond) / 1000) : bucket.burst;
    const allowed = tokens >= 1;
    if (allowed) tokens -= 1;
    // a full bucket is the same as none: forgotten, so the map holds only tenants seen lately
    if (tokens >= bucket.burst) this.buckets.delete(bucket.tenantId);
    else this.buckets.set(bucket.tenantId, { tokens, at: now });
    if (this.buckets.size > 100_000) this.forgetFull(now, bucket);
    return Promise.resolve(decision(allowed, tokens, bucket));
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
 * so every API process agrees: refill, take one if there is one, store, expire once it would be full.
 * Answers { allowed (0/1), tokens left as text (a Lua number would be cut to an integer) }.
 */
const TAKE = `
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
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
local allowed = 0
if tokens >= 1 then
  tokens = tokens - 1
  allowed = 1
end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'at', tostring(now))
redis.call('PEXPIRE', KEYS[1], math.ceil((burst - tokens) / rate * 1000) + 1000)
return { allowed, tostring(tokens) }
`;

/** The name `TAKE` is defined under on the connection (ioredis `defineCommand`: EVALSHA, EVAL only after NOSCRIPT). */
const TAKE_COMMAND = 'covelRateTake';
type TakingRedis = IORedis & { [TAKE_COMMAND]: (key: string, ratePerSecond: string, burst: string) => Promise<[number, string]> };

/** How long a take may wait on Redis before the request goes on without it (fail open). */
const REDIS_TAKE_TIMEOUT_MS = 250;

/**
 * The buckets in Redis (`REDIS_URL`): one Lua script per request (by its SHA), shared by every API process.
 * Redis down or slow: the request goes on (fail open) and one warning is logged per outage; the
 * queue needs Redis too, so what would be limited cannot run meanwhile anyway.
 */
export class RedisRateLimiter implements RateLimiter {
  private connection: TakingRedis | null = null;
  private down = false;

  constructor(private readonly options: { redisUrl: string; prefix: string; logger: Pick<Logger, 'warn'> }) {}

  async take(bucket: BucketSpec): Promise<RateDecision> {
    try {
      const [allowed, tokens] = await this.redis().covelRateTake(this.key(bucket.tenantId), String(bucket.ratePerSecond), String(bucket.burst));
      this.down = false;
      return decision(allowed === 1, Number(tokens), bucket);
    } catch (error) {
      if (!this.down) this.options.logger.warn(`rate limit not checked (Redis: ${String(error)}): requests pass unlimited until it answers`);
      this.down = true;
      return decision(true, bucket.burst, bucket);
    }
  }

  async close(): Promise<void> {
    const connection = this.connection;
    this.connection = null;
    await connection?.quit().catch(() => connection.disconnect());
  }

  private key(tenantId: string) {
    return `${this.options.prefix}:rate:${tenantId}`;
  }

  private redis(): TakingRedis {
    if (this.connection) return this.connection;
    const connection = new IORedis(this.options.redisUrl, {
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
