import { join } from 'node:path';
import { Queue } from 'bullmq';
import IORedis from 'ioredis';
import { Client } from 'pg';
import { RUNTIME_QUEUE_NAME } from '../../libs/engine';
import { REDIS_URL, startStack, type Stack } from '../support/stack';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Issue 11: a worker SIGKILLed inside an agent loop, after its tool call was executed and recorded
 * and before the next model call (the fixture's PreLLMCall hook holds that call). The runtime job
 * is retried on the other worker, which resumes the loop from the log: the recorded model call is
 * not sent again and the recorded tool call is not executed again; the turn commits once.
 */
describe('worker killed between a tool call and the next model call (PostgreSQL + BullMQ)', () => {
  let stack: Stack;
  let db: Client;
  let redis: IORedis;
  let runtimes: Queue;
  const saved = process.env.COVEL_PLUGINS_DIR;
  beforeAll(async () => {
    process.env.COVEL_PLUGINS_DIR = join(__dirname, '..', 'fixtures', 'crash-tool-plugins'); // API and workers load the same plugins
    stack = await startStack({ workers: 2 });
    db = new Client({ connectionString: stack.databaseUrl });
    await db.connect();
    redis = new IORedis(REDIS_URL, { maxRetriesPerRequest: null });
    runtimes = new Queue(RUNTIME_QUEUE_NAME, { connection: redis, prefix: stack.env.COVEL_QUEUE_PREFIX });
  }, 120_000);
  afterAll(async () => {
    if (saved === undefined) delete process.env.COVEL_PLUGINS_DIR;
    else process.env.COVEL_PLUGINS_DIR = saved;
    await runtimes?.close();
    redis?.disconnect();
    await db?.end();
    await stack?.stop();
  }, 60_000);

  const typesOf = async (sessionId: string) =>
    (await db.query(`select type, data->>'step' as step from events where stream_id = $1 order by stream_version`, [sessionId])).rows as {
      type: string;
      step: string | null;
    }[];

  it('the retried job resumes from the log: each model call and the tool run exactly once, one commit', async () => {
    const { client } = stack;
    const { id } = await client.createSession();
    const { executionId } = await client.submit(id, 'Write it down');
    // the tool has run and its outcome is recorded: the victim is now holding the next model call
    let victim: string | undefined;
    for (let i = 0; i < 600 && !victim; i++) {
      const done = await db.query(`select 1 from events where type = 'tool.completed@1' and data->>'executionId' = $1`, [executionId]);
      if (done.rowCount) victim = (await runtimes.getActive()).find((j) => (j.data as { executionId: string }).executionId === executionId)?.processedBy;
      if (!victim) await sleep(20);
    }
    expect(victim).toMatch(/^w[12]$/);
    expect((await typesOf(id)).filter((e) => e.type === 'llm.calling@1')).toHaveLength(1); // the next call is not out yet
    const worker = stack.workers.find((w) => w.name === `worker ${victim}`)!;
    worker.child.kill('SIGKILL');
    await worker.exited;

    expect(await client.waitFor(executionId, 90_000)).toBe('committed');
    const events = await typesOf(id);
    const count = (type: string) => events.filter((e) => e.type === type).length;
    expect(events.filter((e) => e.type === 'llm.calling@1').map((e) => e.step)).toEqual(['1', '2']);
    expect(count('llm.responded@1')).toBe(2);
    expect(count('tool.called@1')).toBe(1);
    expect(count('tool.completed@1')).toBe(1);
    expect(count('plugin-data.written@1')).toBe(1); // the tool ran once
    expect(count('turn.committed@1')).toBe(1);
  }, 180_000);
});
