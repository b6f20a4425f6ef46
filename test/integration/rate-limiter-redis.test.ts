import { randomUUID } from 'node:crypto';
import IORedis from 'ioredis';
import { RedisRateLimiter } from '../../libs/engine';
import { openMonitor } from '../support/redis-monitor';
import { startRedisChild } from '../support/redis-server';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The Redis buckets run their Lua script by its SHA (ioredis `defineCommand`): EVALSHA per request,
 * the script's text only when Redis does not know it yet (NOSCRIPT, e.g. after SCRIPT FLUSH or a restart).
 */
describe('RedisRateLimiter (real Redis)', () => {
  it('takes with EVALSHA, not EVAL per request, and still decides right', async () => {
    // a private server: MONITOR on the shared one also streams the other suites' commands, and a line
    // arriving before ioredis has seen MONITOR's own reply breaks its command queue
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
    } finally {
      monitor.disconnect();
      client.disconnect();
      await limiter.close();
      await redis.kill();
    }
  });
});
