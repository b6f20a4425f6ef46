import { Queue } from 'bullmq';
import { redisConnection } from '../../libs/engine';
import { admitAndAdd, withAdmitAdd } from '../../libs/engine/queue/admit-add';
import { ADMIT_SCRIPT } from '../../libs/engine/queue/fair';
import { queuePrefixes } from '../support/queue-prefixes';
import { REDIS_URL } from '../support/stack';

/**
 * Issue 33: an enqueue's admission and the add of its turn job in one script call (`admit-add.ts`),
 * on the real Redis: the job it writes is the one `Queue.add` writes, and a job held or admitted
 * already is not added.
 */
describe('admission and add of a turn job in one call (BullMQ)', () => {
  const { redis, prefix: newPrefix, closing } = queuePrefixes('covel-admit');

  function queueOn() {
    const prefix = newPrefix();
    const connection = redisConnection(REDIS_URL);
    expect(withAdmitAdd(connection)).toBe(true);
    connection.defineCommand('covelFairAdmit', { numberOfKeys: 0, lua: ADMIT_SCRIPT });
    const queue = new Queue('covel-turns', { connection, prefix });
    closing.push(async () => {
      await queue.close();
      connection.disconnect();
    });
    /** ADMIT_SCRIPT's arguments: a window of `window` admissions, no default cap, a producer's enqueue. */
    const admission = (execution: string, window = 0) => [
      `${prefix}:fair`,
      window,
      0,
      `${prefix}:covel-turns:`,
      'tenant-a',
      execution,
      JSON.stringify({ execution }),
      0,
      1, // a producer's enqueue
    ];
    return { prefix, connection, queue, admission };
  }

  const opts = (execution: string) => ({
    timestamp: 1_700_000_000_000,
    jobId: `turn-${execution}`,
    attempts: 3,
    backoff: { type: 'exponential', delay: 500 },
    removeOnComplete: true,
    removeOnFail: true,
  });
  const data = (execution: string) => ({ tenantId: 'tenant-a', sessionId: 's-1', executionId: execution });

  it('writes the job Queue.add writes (its hash, the wait list, the marker), and admits it as the admission script does', async () => {
    const one = queueOn();
    const other = queueOn();
    await other.queue.waitUntilReady();
    expect(
      await admitAndAdd({ connection: one.connection, queue: one.queue, name: 'turn', data: data('e-1'), opts: opts('e-1'), admission: one.admission('e-1') }),
    ).toBe(1);
    // the two calls it replaces, on another prefix
    expect(await (other.connection as unknown as { covelFairAdmit: (...a: unknown[]) => Promise<number> }).covelFairAdmit(...other.admission('e-1'))).toBe(1);
    await other.queue.add('turn', data('e-1'), opts('e-1'));
    const state = async (prefix: string) => ({
      job: await redis.hgetall(`${prefix}:covel-turns:turn-e-1`),
      wait: await redis.lrange(`${prefix}:covel-turns:wait`, 0, -1),
      marker: await redis.zrange(`${prefix}:covel-turns:marker`, 0, -1, 'WITHSCORES'),
      admitted: await redis.zrange(`${prefix}:fair:admitted`, 0, -1),
      inflight: await redis.smembers(`${prefix}:fair:inflight:tenant-a`),
    });
    const [mine, theirs] = [await state(one.prefix), await state(other.prefix)];
    expect(mine.job.data).toBe(JSON.stringify(data('e-1')));
    expect(mine.wait).toEqual(['turn-e-1']);
    expect(mine).toEqual(theirs);
    const job = await one.queue.getJob('turn-e-1');
    expect(job?.data).toEqual(data('e-1'));
    expect(job?.opts.attempts).toBe(3);
  });

  it('adds nothing for an execution held (the window full) nor for one admitted already whose job is there', async () => {
    const { connection, queue, admission, prefix } = queueOn();
    const enqueue = (execution: string) =>
      admitAndAdd({ connection, queue, name: 'turn', data: data(execution), opts: opts(execution), admission: admission(execution, 1) });
    expect(await enqueue('e-1')).toBe(1);
    // admitted already, its job there: 2, nothing added again
    expect(await enqueue('e-1')).toBe(2);
    // the window (1) is full: held, no job
    expect(await enqueue('e-2')).toBe(0);
    expect(await redis.exists(`${prefix}:covel-turns:turn-e-2`)).toBe(0);
    expect(await redis.sismember(`${prefix}:fair:held`, 'e-2')).toBe(1);
    expect(await redis.lrange(`${prefix}:covel-turns:wait`, 0, -1)).toEqual(['turn-e-1']);
    // admitted but its job gone (an add lost before this layer, a job removed by hand): added again
    await redis.del(`${prefix}:covel-turns:turn-e-1`);
    await redis.del(`${prefix}:covel-turns:wait`);
    expect(await enqueue('e-1')).toBe(1);
    expect(await redis.lrange(`${prefix}:covel-turns:wait`, 0, -1)).toEqual(['turn-e-1']);
  });
});
