import { randomUUID } from 'node:crypto';
import { Queue, QueueEvents } from 'bullmq';
import IORedis from 'ioredis';
import { BullMqTurnQueue, TURN_QUEUE_NAME, turnJobId } from '../../libs/engine';
import { EventStore, inlineProjections, openDatabase } from '../../libs/events';
import { REDIS_URL, startStack } from '../support/stack';

describe('queue recovery on BullMQ', () => {
  it('a retried enqueue of the same execution adds no second job', async () => {
    const prefix = `covel-it-${randomUUID().slice(0, 8)}`;
    const producer = new BullMqTurnQueue({ redisUrl: REDIS_URL, prefix });
    const connection = new IORedis(REDIS_URL, { maxRetriesPerRequest: null });
    const queue = new Queue(TURN_QUEUE_NAME, { connection, prefix });
    try {
      const job = { executionId: randomUUID(), sessionId: 's', tenantId: 't' };
      await producer.enqueue(job);
      await producer.enqueue(job);
      await producer.enqueue(job);
      expect(await queue.getJobCounts('waiting', 'active', 'delayed')).toMatchObject({ waiting: 1, active: 0, delayed: 0 });
      expect((await queue.getJobs(['waiting'])).map((j) => j.data)).toEqual([job]);
    } finally {
      await queue.obliterate({ force: true });
      await queue.close();
      connection.disconnect();
      await producer.close();
    }
  });

  it('an input appended whose enqueue never happened is picked up by the sweeper and committed', async () => {
    const stack = await startStack({ workers: 1, workerEnv: { COVEL_SWEEP_INTERVAL_MS: '300', COVEL_SWEEP_STALLED_MS: '500' } });
    try {
      const { client } = stack;
      const { id } = await client.createSession();
      // the API's append succeeded, then the process died before enqueueing: only the event exists
      const open = await openDatabase({ kind: 'postgres', url: stack.databaseUrl });
      // as the API appends (its read models inline): the queued execution is there, its job is not
      const store = new EventStore(open.db, { inline: inlineProjections });
      const tenantId = (await store.readStream(id))[0].tenantId;
      const executionId = randomUUID();
      await store.append({
        tenantId,
        streamId: id,
        expectedVersion: await store.streamVersion(id),
        events: [{ type: 'player-input.submitted@1', data: { executionId, turnId: randomUUID(), messageId: randomUUID(), text: 'lost enqueue' } }],
      });
      await open.close();
      // nothing enqueues it: the sweeper's pass is what finds it
      for (let i = 0; i < 100; i++) {
        const found = await client.execution(executionId).catch(() => null);
        if (found) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      await client.waitFor(executionId, 30_000);
      expect((await client.messages(id)).map((m) => m.role)).toEqual(['user', 'assistant']);
    } finally {
      await stack.stop();
    }
  }, 90_000);

  it('a job retrying cannot fix (its execution does not exist) fails at once as UnrecoverableError, not retried', async () => {
    const stack = await startStack({ workers: 1 });
    const prefix = stack.env.COVEL_QUEUE_PREFIX;
    const connection = new IORedis(REDIS_URL, { maxRetriesPerRequest: null });
    // read the queue's event stream from its start: an event emitted before the first XREAD is not missed
    const events = new QueueEvents(TURN_QUEUE_NAME, { connection, prefix, lastEventId: '0-0' });
    const producer = new BullMqTurnQueue({ redisUrl: REDIS_URL, prefix });
    try {
      await events.waitUntilReady();
      const job = { executionId: randomUUID(), sessionId: randomUUID(), tenantId: randomUUID() };
      const jobId = turnJobId(job.executionId);
      let activations = 0;
      events.on('active', ({ jobId: id }) => {
        if (id === jobId) activations++;
      });
      const ended = new Promise<string>((resolve) => {
        events.on('failed', ({ jobId: id, failedReason }) => {
          if (id === jobId) resolve(`failed: ${failedReason}`);
        });
        events.on('completed', ({ jobId: id }) => {
          if (id === jobId) resolve('completed');
        });
      });
      await producer.enqueue(job);
      // retried, it would come back 4 more times (1 + 2 + 4 + 8 s of backoff) before it ends
      expect(await ended).toMatch(/^failed: EXECUTION_NOT_FOUND: execution .* not found in session/);
      expect(activations).toBe(1);
    } finally {
      await events.close();
      connection.disconnect();
      await producer.close();
      await stack.stop();
    }
  }, 90_000);
});
