import { Client } from 'pg';
import { startStack, type Stack } from '../support/stack';

/** A worker killed with SIGKILL in the middle of a turn: the job moves to the other worker. */
describe('worker killed mid-turn', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({
      workers: 2,
      // slow model calls so the kill lands mid-turn; short locks so the stalled job comes back fast
      workerEnv: { COVEL_EMULATOR_DELAY_MS: '2500', COVEL_JOB_LOCK_MS: '2000', COVEL_STALLED_INTERVAL_MS: '1000' },
    });
  }, 120_000);
  afterAll(() => stack?.stop(), 60_000);

  it('the turn is retried on another worker and committed exactly once', async () => {
    const { client } = stack;
    const { id } = await client.createSession();
    const { executionId, turnId } = await client.submit(id, 'Cross the bridge');

    // wait until a worker has claimed the turn and recorded its model call, then kill it
    let victimId = '';
    const db = new Client({ connectionString: stack.databaseUrl });
    await db.connect();
    try {
      for (let i = 0; i < 200 && !victimId; i++) {
        const r = await db.query(
          `select data->>'workerId' as w from events e where stream_id = $1 and type = 'execution.started@1'
          and exists (select 1 from events c where c.stream_id = e.stream_id and c.type = 'llm.calling@1')`,
          [id],
        );
        victimId = r.rows[0]?.w ?? '';
        if (!victimId) await new Promise((r) => setTimeout(r, 50));
      }
      expect(victimId).toMatch(/^w[12]$/);
      const victim = stack.workers.find((w) => w.name === `worker ${victimId}`)!;
      victim.child.kill('SIGKILL');
      await victim.exited;
      expect((await client.execution(executionId)).status).toBe('running');

      await client.waitFor(executionId, 60_000);
      const execution = await client.request<{ attempts: number; workerId: string }>('GET', `/v1/executions/${executionId}`);
      expect(execution.attempts).toBe(2);
      expect(execution.workerId).not.toBe(victimId);

      const events = await db.query(`select type, data from events where stream_id = $1 order by stream_version`, [id]);
      const types = events.rows.map((r) => r.type);
      expect(types.filter((t) => t === 'execution.started@1')).toHaveLength(2);
      expect(types.filter((t) => t === 'turn.committed@1')).toHaveLength(1);
      expect(types.filter((t) => t === 'runtime.output.produced@1')).toHaveLength(1);
    } finally {
      await db.end();
    }

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
});
