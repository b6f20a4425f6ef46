import { randomBytes, randomUUID } from 'node:crypto';
import { Job, Queue, Worker } from 'bullmq';
import IORedis from 'ioredis';
import { type BullMqOptions, BullMqTurnQueue, deleteQueueKeys, TURN_QUEUE_NAME, type TurnJob, turnJobId } from '../../libs/engine';
import { RELEASE_SCRIPT } from '../../libs/engine/queue/fair';
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
  const turnJob = (tenantId: string = randomUUID()): TurnJob => ({ executionId: randomUUID(), sessionId: randomUUID(), tenantId });
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

  it('an enqueue kept while its turn job ran, the job ended without its release (the process died in between, or the release call failed): the tick that frees the place makes it', async () => {
    const prefix = newPrefix();
    const producer = queueOn(prefix);
    const job = turnJob();
    await producer.enqueue(job);
    // a worker that runs the job, then dies between the job's end and its release: BullMQ's own, which
    // completes (and removes) the job and releases nothing
    const running = deferred();
    const go = deferred();
    const bare = new Worker(
      TURN_QUEUE_NAME,
      async () => {
        running.resolve();
        await go.promise;
      },
      { connection: { url: REDIS_URL }, prefix },
    );
    await running.promise;
    await producer.enqueue(job); // a resume while the job runs (its lock held): kept
    const completed = new Promise((resolve) => bare.once('completed', resolve));
    go.resolve();
    await completed;
    await bare.close();
    const redis = new IORedis(REDIS_URL);
    const kept = await redis.hexists(`${prefix}:fair:again`, job.executionId);
    redis.disconnect();
    expect(kept).toBe(1);
    const runs: string[] = [];
    const consumer = queueOn(prefix, {
      fairness: { tickMs: 100, staleAfterMs: 200 },
      consumer: { concurrency: 2, lockDurationMs: 5_000, stalledIntervalMs: 2_000 },
    });
    consumer.consume({ turn: async (j) => (runs.push(j.executionId), done), runtime: async () => done });
    // at the tick (a fraction of a second here), not when the sweeper finds the execution pending with no job
    expect(await eventually(() => runs.length > 0)).toBe(true);
    await new Promise((r) => setTimeout(r, 300));
    expect(runs).toEqual([job.executionId]);
  }, 30_000);

  it('without a window set, the window is the total concurrency of the consumers alive, shared by every process', async () => {
    const prefix = newPrefix();
    // a tick of 1 s: a registration lasts 3 s, not lapsing on a loaded machine between two ticks
    const consumer = (concurrency: number) =>
      queueOn(prefix, { fairness: { tickMs: 1_000 }, consumer: { concurrency, lockDurationMs: 5_000, stalledIntervalMs: 2_000 } });
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
    expect(await redis.get(`${prefix}:fair:window`)).toBe('5');
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

  const heldOn = async (queue: BullMqTurnQueue) => (await queue.depth()).find((d) => d.queue === TURN_QUEUE_NAME && d.state === 'held')?.jobs;

  it('the last auto window stands when every consumer is gone (a redeploy, a crash loop): a flood is still held; no window only before any consumer ever registered', async () => {
    const prefix = newPrefix();
    const consumer = queueOn(prefix, { fairness: { tickMs: 1_000 }, consumer: { concurrency: 2, lockDurationMs: 5_000, stalledIntervalMs: 2_000 } });
    consumer.consume({ turn: async () => done, runtime: async () => done });
    const redis = new IORedis(REDIS_URL);
    for (const end = Date.now() + 5_000; Date.now() < end && (await redis.get(`${prefix}:fair:window`)) !== '2';) await new Promise((r) => setTimeout(r, 20));
    expect(await redis.get(`${prefix}:fair:window`)).toBe('2');
    await consumer.close();
    await redis.del(`${prefix}:fair:window`); // as if its registration had lapsed long ago
    const producer = queueOn(prefix);
    const tenant = randomUUID();
    for (let i = 0; i < 5; i++) await producer.enqueue(turnJob(tenant));
    expect(await heldOn(producer)).toBe(3);
    // a deployment whose consumers never ran: no window (a producer upgraded before its workers holds nothing)
    const fresh = queueOn(newPrefix());
    for (let i = 0; i < 5; i++) await fresh.enqueue(turnJob(tenant));
    expect(await heldOn(fresh)).toBe(0);
    redis.disconnect();
  }, 30_000);

  it('a release finding a new turn job of the execution (enqueued between the old job’s removal and the release) leaves the place to it', async () => {
    const prefix = newPrefix();
    const producer = queueOn(prefix, { fairness: { window: 1 } });
    const [again, waiting] = [turnJob(), turnJob()];
    await producer.enqueue(again); // admitted: its (new) job waits
    await producer.enqueue(waiting); // held
    const redis = new IORedis(REDIS_URL);
    redis.defineCommand('release', { numberOfKeys: 0, lua: RELEASE_SCRIPT });
    const release = (redis as unknown as { release(...args: (string | number)[]): Promise<string[]> }).release;
    const admitted = await release.call(redis, `${prefix}:fair`, 1, 0, `${prefix}:${TURN_QUEUE_NAME}:`, again.tenantId, again.executionId);
    redis.disconnect();
    expect(admitted).toEqual([]);
    expect(await heldOn(producer)).toBe(1);
  }, 30_000);

  it('a turn job failed for good outside the handler (its data unreadable) frees its place at once, not at the next reconcile', async () => {
    const prefix = newPrefix();
    const producer = queueOn(prefix, { fairness: { window: 1 } });
    const [broken, waiting] = [turnJob(), turnJob()];
    await producer.enqueue(broken);
    const turns = new Queue(TURN_QUEUE_NAME, { connection: { url: REDIS_URL }, prefix });
    const job = await Job.fromId(turns, turnJobId(broken.executionId));
    await job!.updateData({ ...broken, claimedAttempt: -1 }); // parseData: UnrecoverableError before the handler
    await turns.close();
    await producer.enqueue(waiting);
    const runs: string[] = [];
    const consumer = queueOn(prefix, { fairness: { window: 1 }, consumer: { concurrency: 1, lockDurationMs: 5_000, stalledIntervalMs: 2_000 } });
    consumer.consume({ turn: async (j) => (runs.push(j.executionId), done), runtime: async () => done });
    expect(await eventually(() => runs.length > 0)).toBe(true);
    expect(runs).toEqual([waiting.executionId]);
  }, 30_000);

  it('a tick mends a tenant’s in-flight set that drifted from the admitted ones (else stuck at its cap); a tenant id with `|` in it is fine', async () => {
    const prefix = newPrefix();
    const tenant = `tenant|${randomUUID()}|x`;
    const fairness = { window: 10, tenantMaxInFlight: 1 };
    const producer = queueOn(prefix, { fairness });
    const redis = new IORedis(REDIS_URL);
    await redis.sadd(`${prefix}:fair:inflight:${tenant}`, 'phantom');
    await redis.sadd(`${prefix}:fair:tenants`, tenant);
    redis.disconnect();
    const [first, second] = [turnJob(tenant), turnJob(tenant)];
    await producer.enqueue(first);
    await producer.enqueue(second);
    expect(await heldOn(producer)).toBe(2);
    const runs: string[] = [];
    const consumer = queueOn(prefix, {
      fairness: { ...fairness, tickMs: 200 },
      consumer: { concurrency: 2, lockDurationMs: 5_000, stalledIntervalMs: 2_000 },
    });
    consumer.consume({ turn: async (j) => (runs.push(j.executionId), done), runtime: async () => done });
    expect(await eventually(() => runs.length === 2)).toBe(true);
    expect(runs).toEqual([first.executionId, second.executionId]);
  }, 30_000);

  it('a tenant’s cap holds across two consumers (and a producer of its own)', async () => {
    const prefix = newPrefix();
    const fairness = { window: 10, tenantMaxInFlight: 2 };
    const tenant = randomUUID();
    let running = 0;
    let maxRunning = 0;
    let ended = 0;
    const handlers = {
      turn: async () => {
        maxRunning = Math.max(maxRunning, ++running);
        await new Promise((r) => setTimeout(r, 100));
        running--;
        ended++;
        return done;
      },
      runtime: async () => done,
    };
    for (let i = 0; i < 2; i++) queueOn(prefix, { fairness, consumer: { concurrency: 3, lockDurationMs: 5_000, stalledIntervalMs: 2_000 } }).consume(handlers);
    const producer = queueOn(prefix, { fairness });
    for (let i = 0; i < 6; i++) await producer.enqueue(turnJob(tenant));
    expect(await eventually(() => ended === 6)).toBe(true);
    expect(maxRunning).toBe(2);
  }, 30_000);

  it('an enqueue of an admitted execution whose turn job is there adds nothing (no second add: one Redis round trip)', async () => {
    const prefix = newPrefix();
    const producer = queueOn(prefix, { fairness: { window: 1 } });
    const job = turnJob();
    for (let i = 0; i < 3; i++) await producer.enqueue(job);
    const redis = new IORedis(REDIS_URL);
    const events = await redis.xrange(`${prefix}:${TURN_QUEUE_NAME}:events`, '-', '+');
    redis.disconnect();
    const names = events.map(([, fields]) => fields[fields.indexOf('event') + 1]);
    expect(names.filter((n) => n === 'added')).toHaveLength(1);
    expect(names.filter((n) => n === 'duplicated')).toHaveLength(0);
  }, 30_000);
});

function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}
