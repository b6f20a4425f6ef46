import { randomBytes, randomUUID } from 'node:crypto';
import { Queue } from 'bullmq';
import IORedis from 'ioredis';
import { type BullMqOptions, BullMqTurnQueue, deleteQueueKeys, TURN_QUEUE_NAME, type TurnJob, turnJobId } from '../../libs/engine';
import { queueConformance } from '../../libs/engine/queue/test/queue-conformance';
import { REDIS_URL } from '../support/stack';

/** The queue port's conformance suite on BullMQ and the real Redis, each queue with its own key prefix. */
const prefixes: string[] = [];

afterAll(async () => {
  for (const prefix of prefixes) await deleteQueueKeys(REDIS_URL, prefix);
});

queueConformance({
  name: 'BullMQ',
  create: ({ concurrency, retry, onJobStarted, fairness }) => {
    const prefix = `covel-conformance-${randomBytes(4).toString('hex')}`;
    prefixes.push(prefix);
    return new BullMqTurnQueue({
      redisUrl: REDIS_URL,
      prefix,
      retry,
      consumer: { concurrency, lockDurationMs: 5_000, stalledIntervalMs: 2_000 },
      ...(onJobStarted ? { onJobStarted } : {}),
      ...(fairness ? { fairness } : {}),
    });
  },
});

describe('fair scheduling on BullMQ: what only Redis shares', () => {
  const open: BullMqTurnQueue[] = [];
  afterEach(async () => {
    await Promise.all(open.splice(0).map((q) => q.close()));
  });
  const queueOn = (prefix: string, options: Partial<BullMqOptions> = {}) => {
    const queue = new BullMqTurnQueue({ redisUrl: REDIS_URL, prefix, ...options });
    open.push(queue);
    return queue;
  };
  const newPrefix = () => {
    const prefix = `covel-fair-${randomBytes(4).toString('hex')}`;
    prefixes.push(prefix);
    return prefix;
  };
  const turnJob = (tenantId = randomUUID()): TurnJob => ({ executionId: randomUUID(), sessionId: randomUUID(), tenantId });
  const done = { kind: 'done' } as const;
  const eventually = async (check: () => boolean, ms = 5_000) => {
    for (const end = Date.now() + ms; Date.now() < end; await new Promise((r) => setTimeout(r, 20))) if (check()) return true;
    return check();
  };

  it('a consumer’s tick frees an admitted execution whose turn job is gone (a producer died between admitting and adding): the held one starts', async () => {
    const prefix = newPrefix();
    const producer = queueOn(prefix, { fairness: { window: 1 } });
    const [lost, waiting] = [turnJob(), turnJob()];
    await producer.enqueue(lost);
    // as if the process had died after the admission, before the add
    const turns = new Queue(TURN_QUEUE_NAME, { connection: { url: REDIS_URL }, prefix });
    await turns.remove(turnJobId(lost.executionId));
    await turns.close();
    await producer.enqueue(waiting);
    const runs: string[] = [];
    const consumer = queueOn(prefix, {
      fairness: { window: 1, tickMs: 100, staleAfterMs: 200 },
      consumer: { concurrency: 2, lockDurationMs: 5_000, stalledIntervalMs: 2_000 },
    });
    consumer.consume({ turn: async (job) => (runs.push(job.executionId), done), runtime: async () => done });
    expect(await eventually(() => runs.length > 0)).toBe(true);
    expect(runs).toEqual([waiting.executionId]);
  }, 30_000);

  it('without a window set, the window is the total concurrency of the consumers alive, shared by every process', async () => {
    const prefix = newPrefix();
    const consumer = (concurrency: number) =>
      queueOn(prefix, { fairness: { tickMs: 100 }, consumer: { concurrency, lockDurationMs: 5_000, stalledIntervalMs: 2_000 } });
    const gate = deferred();
    const started: string[] = [];
    const handlers = {
      turn: async (job: TurnJob) => {
        started.push(job.executionId);
        await gate.promise;
        return done;
      },
      runtime: async () => done,
    };
    // two consumers (3 + 2): five places; a producer of its own enqueues seven
    consumer(3).consume(handlers);
    consumer(2).consume(handlers);
    const producer = queueOn(prefix);
    const redis = new IORedis(REDIS_URL);
    for (const end = Date.now() + 5_000; Date.now() < end && (await redis.get(`${prefix}:fair:window`)) !== '5';) await new Promise((r) => setTimeout(r, 20));
    redis.disconnect();
    const tenant = randomUUID();
    for (let i = 0; i < 7; i++) await producer.enqueue(turnJob(tenant));
    expect(await eventually(() => started.length === 5)).toBe(true);
    await new Promise((r) => setTimeout(r, 300));
    expect(started).toHaveLength(5);
    expect((await producer.depth()).find((d) => d.queue === TURN_QUEUE_NAME && d.state === 'held')?.jobs).toBe(2);
    gate.resolve();
    expect(await eventually(() => started.length === 7)).toBe(true);
  }, 30_000);
});

function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}
