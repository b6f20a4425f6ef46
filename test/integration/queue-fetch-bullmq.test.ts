import { Queue, Worker } from 'bullmq';
import { redisConnection } from '../../libs/engine';
import { DRAINED_FIELD, withDrainedHint, withLeanFetch } from '../../libs/engine/queue/fetch';
import { queuePrefixes } from '../support/queue-prefixes';
import { REDIS_URL } from '../support/stack';

/**
 * Issue 33: the consumers' fetch (`fetch.ts`) on the real Redis. BullMQ marks the queue each time
 * it takes a job (the base marker a worker's BZPOPMIN waits on); the lean fetch takes that mark
 * away when it finds nothing to take, so an idle worker blocks at once instead of waking on it.
 */
describe("a worker's fetch on BullMQ: the stale marker", () => {
  const { redis, prefix: newPrefix, closing } = queuePrefixes('covel-fetch');

  /** A queue and a worker that fetches only when asked (no loop of its own), on a connection with or without the lean fetch. */
  function queueAndWorker(lean: boolean) {
    const prefix = newPrefix();
    const connection = redisConnection(REDIS_URL);
    if (lean) expect(withLeanFetch(connection)).toBe(true);
    const queue = new Queue('q', { connection, prefix });
    const worker = new Worker('q', null, { connection, prefix, autorun: false });
    if (lean) expect(withDrainedHint(worker)).toBe(true);
    closing.push(async () => {
      await worker.close(true);
      await queue.close();
      connection.disconnect();
    });
    const marker = () => redis.zrange(`${prefix}:q:marker`, 0, -1, 'WITHSCORES');
    return { queue, worker, marker };
  }

  it('taking the last job leaves no marker; BullMQ alone leaves one (an idle worker wakes on it for nothing)', async () => {
    for (const lean of [true, false]) {
      const { queue, worker, marker } = queueAndWorker(lean);
      await queue.add('job', { n: 1 });
      // the add's marker, popped as a waiting worker's BZPOPMIN pops it when it wakes
      expect(await redis.zpopmin(`${queue.opts.prefix}:q:marker`)).toEqual(['0', '0']);
      expect((await worker.getNextJob('token-1', { block: false }))?.data).toEqual({ n: 1 });
      expect(await marker()).toEqual(lean ? [] : ['0', '0']);
    }
  });

  it('a fetch that finds nothing removes a stale base marker (left by a process on BullMQ alone, a fetch at a job end); BullMQ alone leaves it', async () => {
    for (const lean of [true, false]) {
      const { queue, worker, marker } = queueAndWorker(lean);
      await queue.waitUntilReady();
      await redis.zadd(`${queue.opts.prefix}:q:marker`, 0, '0');
      expect(await worker.getNextJob('token-1', { block: false })).toBeUndefined();
      expect(await marker()).toEqual(lean ? [] : ['0', '0']);
    }
  });

  it('a job added after that marks the queue again and is taken; a waiting one keeps the marker; a delayed one keeps its own', async () => {
    const { queue, worker, marker } = queueAndWorker(true);
    await queue.add('delayed', { n: 0 }, { delay: 60_000 });
    await queue.addBulk([
      { name: 'job', data: { n: 1 } },
      { name: 'job', data: { n: 2 } },
    ]);
    expect((await worker.getNextJob('token-1', { block: false }))?.data).toEqual({ n: 1 });
    // one still waits: the marker stays (with the delayed job's own)
    expect((await marker()).filter((_, i) => i % 2 === 0).sort()).toEqual(['0', '1']);
    expect((await worker.getNextJob('token-2', { block: false }))?.data).toEqual({ n: 2 });
    expect(await worker.getNextJob('token-3', { block: false })).toBeUndefined();
    // nothing to take: the base marker gone, the delayed job's marker left for its time
    expect((await marker()).filter((_, i) => i % 2 === 0)).toEqual(['1']);
    await queue.add('job', { n: 3 });
    expect((await marker()).filter((_, i) => i % 2 === 0).sort()).toEqual(['0', '1']);
    expect((await worker.getNextJob('token-4', { block: false }))?.data).toEqual({ n: 3 });
  });

  it('a worker that takes the last waiting job counts the queue drained (its next fetch blocks on the marker, no empty fetch); one that leaves a job waiting does not; BullMQ alone never does', async () => {
    const drained = (worker: Worker) => (worker as unknown as { drained: boolean }).drained;
    for (const lean of [true, false]) {
      const { queue, worker } = queueAndWorker(lean);
      await queue.addBulk([
        { name: 'job', data: { n: 1 } },
        { name: 'job', data: { n: 2 } },
      ]);
      expect((await worker.getNextJob('token-1', { block: false }))?.data).toEqual({ n: 1 });
      expect(drained(worker)).toBe(false);
      const last = await worker.getNextJob('token-2', { block: false });
      expect(last?.data).toEqual({ n: 2 });
      expect(drained(worker)).toBe(lean);
      // the hint goes with the fetch's answer only: never written to the job
      expect(await redis.hget(`${queue.opts.prefix}:q:${last?.id}`, DRAINED_FIELD)).toBeNull();
    }
  });
});

describe("the drained hint keeps the next delayed job's time", () => {
  const { prefix: newPrefix } = queuePrefixes('covel-fetch');

  it('a delayed job is taken when it is due although a job was taken (the last one) while the worker waited for it', async () => {
    const lateness: Record<string, number> = {};
    for (const lean of [false, true]) {
      const prefix = newPrefix();
      const connection = redisConnection(REDIS_URL);
      if (lean) expect(withLeanFetch(connection)).toBe(true);
      const queue = new Queue('q', { connection, prefix });
      const ran: Record<string, number> = {};
      const worker = new Worker('q', async (job) => void (ran[job.name] = Date.now()), { connection, prefix, concurrency: 4 });
      if (lean) expect(withDrainedHint(worker)).toBe(true);
      await worker.waitUntilReady();
      await new Promise((r) => setTimeout(r, 300)); // the worker idles, blocked on the marker
      const due = Date.now() + 1500;
      await queue.add('delayed', {}, { delay: 1500 });
      await new Promise((r) => setTimeout(r, 300)); // it took the delay marker: it waits until the job is due
      await queue.add('now', {});
      while (ran.delayed === undefined && Date.now() < due + 8000) await new Promise((r) => setTimeout(r, 50));
      lateness[String(lean)] = (ran.delayed ?? Infinity) - due;
      await worker.close(true);
      await queue.close();
      connection.disconnect();
    }
    expect(lateness.false).toBeLessThan(1000);
    expect(lateness.true).toBeLessThan(1000);
  }, 30_000);
});
