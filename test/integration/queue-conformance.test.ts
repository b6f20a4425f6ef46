import { randomBytes } from 'node:crypto';
import { BullMqTurnQueue, deleteQueueKeys } from '../../libs/engine';
import { queueConformance } from '../../libs/engine/queue/test/queue-conformance';
import { REDIS_URL } from '../support/stack';

/** The queue port's conformance suite on BullMQ and the real Redis, each queue with its own key prefix. */
const prefixes: string[] = [];

afterAll(async () => {
  for (const prefix of prefixes) await deleteQueueKeys(REDIS_URL, prefix);
});

queueConformance({
  name: 'BullMQ',
  create: ({ concurrency, retry, onJobStarted }) => {
    const prefix = `covel-conformance-${randomBytes(4).toString('hex')}`;
    prefixes.push(prefix);
    return new BullMqTurnQueue({
      redisUrl: REDIS_URL,
      prefix,
      retry,
      consumer: { concurrency, lockDurationMs: 5_000, stalledIntervalMs: 2_000 },
      ...(onJobStarted ? { onJobStarted } : {}),
    });
  },
});
