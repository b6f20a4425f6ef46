import { join } from 'node:path';
import { type CrashStack, crashStack } from '../support/crash-stack';
import { type HoldingProxy, startHoldingProxy } from '../support/holding-proxy';
import { REDIS_URL } from '../support/stack';

/** The sweeper's patience in this stack: far above what a resume taken at once takes, so only the sweeper is that late. */
const SWEEP_STALLED_MS = 20_000;

/**
 * A resume that arrives while the turn job that recorded the suspension is still ending: the
 * worker has appended `execution.suspended@1` (the API shows `waiting`) but BullMQ has not yet
 * marked the job complete. The enqueue finds the job there and adds nothing; the job's end makes it
 * anew at once (the admission kept it: `again` in fair.ts), not the sweeper seconds later.
 */
describe('a resume while the suspension’s turn job is still ending (PostgreSQL + BullMQ)', () => {
  let crash: CrashStack;
  let proxy: HoldingProxy;
  beforeAll(async () => {
    const redis = new URL(REDIS_URL);
    proxy = await startHoldingProxy({ host: redis.hostname, port: Number(redis.port || 6379) });
    crash = await crashStack({
      workers: 0,
      env: { COVEL_PLUGINS_DIR: join(__dirname, '..', 'fixtures', 'pause-plugins'), COVEL_SWEEP_STALLED_MS: String(SWEEP_STALLED_MS) },
    });
    // the worker's Redis through the proxy: its commands can be held
    await crash.stack.startWorker('w1', { REDIS_URL: `redis://127.0.0.1:${proxy.port}` });
  }, 120_000);
  afterAll(async () => {
    await crash?.stop();
    await proxy?.close();
  }, 60_000);

  it('goes on as soon as that job has ended, not when the sweeper finds it pending', async () => {
    const { client } = crash.stack;
    const { id } = await client.createSession();
    // the end of a turn job (BullMQ's moveToFinished names the turn queue's completed metrics), held: the suspension's
    const ending = proxy.hold(`${crash.stack.env.COVEL_QUEUE_PREFIX}:covel-turns:metrics:completed`);
    const { executionId } = await client.submit(id, 'Open the vault');
    await ending.seen;
    expect(await client.execution(executionId)).toMatchObject({ status: 'waiting', waitingFor: { kind: 'approval' } });
    expect(await crash.jobsOf(executionId)).toBe(1);

    await client.resume(executionId, { approved: true });
    const resumed = Date.now();
    ending.release();
    expect(await client.waitFor(executionId, SWEEP_STALLED_MS + 30_000)).toBe('committed');
    expect(Date.now() - resumed).toBeLessThan(SWEEP_STALLED_MS / 2);

    const log = (await crash.db.query(`select type from events where stream_id = $1 order by stream_version`, [id])).rows as { type: string }[];
    const count = (type: string) => log.filter((e) => e.type === type).length;
    expect([count('execution.suspended@1'), count('execution.resumed@1'), count('turn.committed@1'), count('execution.failed@1')]).toEqual([1, 1, 1, 0]);
  }, 120_000);
});
