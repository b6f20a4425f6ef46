import IORedis from 'ioredis';
import { Client } from 'pg';
import { REDIS_URL, startStack, type Stack } from '../support/stack';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * A worker killed with SIGKILL in the middle of a turn, with the default lock, stalled-check and
 * sweep timings: the job moves to the other worker (BullMQ's stalled check), or, when the job is
 * lost with Redis too, the sweeper enqueues the execution again. The 30 s bounds below are hang
 * guards only (the old defaults took 57–68 s); the measured times are logged.
 */
describe('worker killed mid-turn (default timings)', () => {
  let stack: Stack;
  let db: Client;
  beforeAll(async () => {
    // slow model calls so the kill lands mid-turn; lock and sweep timings are the defaults
    stack = await startStack({ workers: 2, workerEnv: { COVEL_EMULATOR_DELAY_MS: '2500' } });
    db = new Client({ connectionString: stack.databaseUrl });
    await db.connect();
  }, 120_000);
  afterAll(async () => {
    await db?.end();
    await stack?.stop();
  }, 60_000);

  /** Waits until a worker has claimed the turn and recorded its model call; returns that worker's id. */
  async function claimedBy(sessionId: string): Promise<string> {
    for (let i = 0; i < 400; i++) {
      const r = await db.query(
        `select data->>'workerId' as w from events e where stream_id = $1 and type = 'execution.started@1'
        and exists (select 1 from events c where c.stream_id = e.stream_id and c.type = 'llm.calling@1')`,
        [sessionId],
      );
      if (r.rows[0]?.w) return r.rows[0].w as string;
      await sleep(50);
    }
    throw new Error(`no worker claimed session ${sessionId}`);
  }

  /** Milliseconds from `since` until a second attempt of the session's execution is recorded. */
  async function secondAttemptAfter(sessionId: string, since: number): Promise<number> {
    for (;;) {
      const r = await db.query(`select count(*)::int as n from events where stream_id = $1 and type = 'execution.started@1'`, [sessionId]);
      if (r.rows[0].n >= 2) return Date.now() - since;
      if (Date.now() - since > 30_000) throw new Error('no second attempt within 30 s');
      await sleep(50);
    }
  }

  async function expectCommittedOnce(sessionId: string, executionId: string, victimId: string) {
    const execution = await stack.client.request<{ attempts: number; workerId: string }>('GET', `/v1/executions/${executionId}`);
    expect(execution.attempts).toBe(2);
    expect(execution.workerId).not.toBe(victimId);
    const events = await db.query(`select type from events where stream_id = $1 order by stream_version`, [sessionId]);
    const types = events.rows.map((r) => r.type);
    expect(types.filter((t) => t === 'execution.started@1')).toHaveLength(2);
    expect(types.filter((t) => t === 'turn.committed@1')).toHaveLength(1);
    expect(types.filter((t) => t === 'runtime.output.produced@1')).toHaveLength(1);
  }

  it('the turn is retried on another worker and committed exactly once', async () => {
    const { client } = stack;
    const { id } = await client.createSession();
    const { executionId, turnId } = await client.submit(id, 'Cross the bridge');

    const victimId = await claimedBy(id);
    expect(victimId).toMatch(/^w[12]$/);
    const victim = stack.workers.find((w) => w.name === `worker ${victimId}`)!;
    victim.child.kill('SIGKILL');
    const killedAt = Date.now();
    await victim.exited;
    expect((await client.execution(executionId)).status).toBe('running');

    const resumeMs = await secondAttemptAfter(id, killedAt);
    await client.waitFor(executionId, 30_000);
    console.log(`worker kill -9: second attempt started ${resumeMs} ms after the kill; committed ${Date.now() - killedAt} ms after it`);
    await expectCommittedOnce(id, executionId, victimId);

    // exactly one user and one assistant row, and the session goes on with no gap
    const next = await client.submit(id, 'Keep walking');
    await client.waitFor(next.executionId, 60_000);
    const messages = await client.messages(id);
    expect(messages.map((m) => [m.turnId, m.role])).toEqual([
      [turnId, 'user'],
      [turnId, 'assistant'],
      [next.turnId, 'user'],
      [next.turnId, 'assistant'],
    ]);
    expect(messages.map((m) => (m as unknown as { order: number }).order)).toEqual([1, 2, 3, 4]);
  }, 120_000);

  it('a job lost with Redis along with its worker is enqueued again by the sweeper and committed exactly once', async () => {
    // two live workers again (the first test killed one)
    const alive = stack.workers.filter((w) => w.child.exitCode === null && w.child.signalCode === null);
    if (alive.length < 2) alive.push(await stack.startWorker('w3'));
    const { client } = stack;
    const { id } = await client.createSession();
    const { executionId } = await client.submit(id, 'Light the lamp');

    const victimId = await claimedBy(id);
    const victim = alive.find((w) => w.name === `worker ${victimId}`)!;
    victim.child.kill('SIGKILL');
    const killedAt = Date.now();
    await victim.exited;
    // Redis restarted with no persistence: every key of this deployment is gone, the job with them
    const redis = new IORedis(REDIS_URL);
    try {
      let cursor = '0';
      do {
        const [next, keys] = await redis.scan(cursor, 'MATCH', `${stack.env.COVEL_QUEUE_PREFIX}:*`, 'COUNT', 500);
        if (keys.length) await redis.del(...keys);
        cursor = next;
      } while (cursor !== '0');
    } finally {
      redis.disconnect();
    }

    const resumeMs = await secondAttemptAfter(id, killedAt);
    await client.waitFor(executionId, 30_000);
    console.log(`job lost with Redis: second attempt started ${resumeMs} ms after the kill; committed ${Date.now() - killedAt} ms after it`);
    await expectCommittedOnce(id, executionId, victimId);
    expect((await client.messages(id)).map((m) => m.role)).toEqual(['user', 'assistant']);
  }, 120_000);
});
