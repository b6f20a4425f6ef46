import { randomBytes } from 'node:crypto';
import IORedis from 'ioredis';
import { BullMqTurnQueue } from '../../libs/engine';
import { queueConformance } from '../../libs/engine/queue/test/queue-conformance';
import { REDIS_URL } from '../support/stack';

/** The queue port's conformance suite on BullMQ and the real Redis, each queue with its own key prefix. */
const prefixes: string[] = [];

afterAll(async () => {
  const redis = new IORedis(REDIS_URL);
  try {
    for (const prefix of prefixes) {
      let cursor = '0';
      do {
        const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 500);
        if (keys.length) await redis.del(...keys);
        cursor = next;
      } while (cursor !== '0');
    }
  } finally {
    redis.disconnect();
  }
});

queueConformance({
  name: 'BullMQ',
  create: ({ concurrency, retry }) => {
    const prefix = `covel-conformance-${randomBytes(4).toString('hex')}`;
    prefixes.push(prefix);
    return new BullMqTurnQueue({ redisUrl: REDIS_URL, prefix, retry, consumer: { concurrency, lockDurationMs: 5_000, stalledIntervalMs: 2_000 } });
  },
});
