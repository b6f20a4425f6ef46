import { randomBytes } from 'node:crypto';
import IORedis from 'ioredis';
import { deleteQueueKeys } from '../../libs/engine';
import { REDIS_URL } from './stack';

/**
 * The set-up of tests on throwaway BullMQ prefixes of the real Redis, its Jest hooks registered in
 * the calling `describe`: a plain connection to read keys with (connected at its first command),
 * `prefix()` a fresh prefix (its keys deleted after all the tests), and `closing`, what a test
 * opened, closed after each test.
 */
export function queuePrefixes(name: string): { redis: IORedis; prefix: () => string; closing: (() => Promise<unknown>)[] } {
  const prefixes: string[] = [];
  const closing: (() => Promise<unknown>)[] = [];
  const redis = new IORedis(REDIS_URL, { lazyConnect: true });
  afterEach(async () => {
    for (const close of closing.splice(0)) await close();
  });
  afterAll(async () => {
    for (const prefix of prefixes) await deleteQueueKeys(REDIS_URL, prefix);
    redis.disconnect();
  });
  const prefix = () => {
    const made = `${name}-${randomBytes(4).toString('hex')}`;
    prefixes.push(made);
    return made;
  };
  return { redis, prefix, closing };
}
