import { randomUUID } from 'node:crypto';
import IORedis from 'ioredis';
import { RedisRateLimiter } from '../../libs/engine';
import { openMonitor } from '../support/redis-monitor';
import { startRedisChild } from '../support/redis-server';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * A limiter on a private Redis server, with the commands naming its keys as MONITOR saw them: MONITOR on
 * the shared server also streams the other suites' commands, and a line arriving before ioredis has
 * seen MONITOR's own reply breaks its command queue.
 */
async function withMonitoredLimiter(run: (limiter: RedisRateLimiter, seen: string[]) => Promise<void>): Promise<void> {
  const redis = await startRedisChild();
  const prefix = `covel-test-${randomUUID()}`;
  const limiter = new RedisRateLimiter({ redisUrl: redis.url, prefix, logger: { warn: () => undefined } });
  const client = new IORedis(redis.url);
  const monitor = await openMonitor(client); // a connection of its own
  const seen: string[] = [];
  monitor.on('monitor', (_time: string, args: string[]) => {
    if (args.some((a) => a.startsWith(prefix))) seen.push(String(args[0]).toLowerCase());
  });
  try {
    await run(limiter, seen);
  } finally {
    monitor.disconnect();
    client.disconnect();
    await limiter.close();
    await redis.kill();
  }
}

/**
 * The Redis buckets run their Lua script by its SHA (ioredis `defineCommand`): EVALSHA per request,
 * the script's text only when Redis does not know it yet (NOSCRIPT, e.g. after SCRIPT FLUSH or a restart).
 */
describe('RedisRateLimiter (real Redis)', () => {
  it('takes with EVALSHA, not EVAL per request, and still decides right', () =>
    withMonitoredLimiter(async (limiter, seen) => {
      const bucket = { tenantId: 't', ratePerSecond: 0.1, burst: 3 };
      const taken = [];
      for (let i = 0; i < 5; i++) taken.push(await limiter.take(bucket));
      expect(taken.map((d) => [d.allowed, d.remaining])).toEqual([
        [true, 2],
        [true, 1],
        [true, 0],
        [false, 0],
        [false, 0],
      ]);
      await sleep(200); // the monitor's lines arrive after the answers
      // at most the first (Redis had not seen the script) is an EVAL: every other take is an EVALSHA
      expect(seen.filter((c) => c === 'evalsha').length).toBeGreaterThanOrEqual(4);
      expect(seen.filter((c) => c === 'eval').length).toBeLessThanOrEqual(1);
    }));

  it('a bucket holding many tokens leases them: one EVALSHA answers many requests of this process', () =>
    withMonitoredLimiter(async (limiter, seen) => {
      const bucket = { tenantId: 't', ratePerSecond: 0.001, burst: 5000 };
      expect(limiter.takeAtOnce(bucket)).toBeNull(); // no lease yet: only take asks Redis
      const taken = [];
      // the requests after the first are answered from the lease, at once (takeAtOnce) as by take
      for (let i = 0; i < 20; i++) taken.push(i % 2 === 0 ? await limiter.take(bucket) : limiter.takeAtOnce(bucket)!);
      expect(taken.every((d) => d.allowed)).toBe(true);
      expect(taken.map((d) => d.remaining)).toEqual(Array.from({ length: 20 }, (_, i) => 4999 - i));
      await sleep(200);
      expect(seen.filter((c) => c === 'evalsha' || c === 'eval')).toHaveLength(1);
    }));

  it('two processes leasing from one bucket never pass more requests than it holds, and an expired lease goes back to it', async () => {
    const redis = await startRedisChild();
    const prefix = `covel-test-${randomUUID()}`;
    const options = { redisUrl: redis.url, prefix, logger: { warn: () => undefined }, leaseMs: 300 };
    const [a, b] = [new RedisRateLimiter(options), new RedisRateLimiter(options)];
    try {
      // refills ~0 tokens during the test: 2,048 requests pass in all, no more
      const bucket = { tenantId: 't', ratePerSecond: 0.0001, burst: 2048 };
      let allowed = 0;
      const round = async () => {
        let passed = 0;
        for (let refusedInARow = 0; refusedInARow < 4;) {
          const [x, y] = [await a.take(bucket), await b.take(bucket)];
          const n = Number(x.allowed) + Number(y.allowed);
          passed += n;
          refusedInARow = n === 0 ? refusedInARow + 1 : 0;
        }
        return passed;
      };
      allowed += await round();
      expect(allowed).toBeLessThanOrEqual(2048);
      await sleep(400); // the leases expire: their tokens go back with the next takes
      allowed += await round();
      expect(allowed).toBe(2048);
      expect((await a.take(bucket)).allowed).toBe(false);
    } finally {
      await a.close();
      await b.close();
      await redis.kill();
    }
  });
});
