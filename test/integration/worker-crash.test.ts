import type IORedis from 'ioredis';
import type { Client } from 'pg';
import { type CrashStack, crashStack, sleep } from '../support/crash-stack';
import type { Stack } from '../support/stack';

/**
 * A worker killed with SIGKILL while it runs a turn's runtime (its model call is out), with the
 * default lock, stalled-check and sweep timings. A narrator-only turn runs its one runtime inline in
 * the turn job, which keeps its claimed attempt with the job: BullMQ's stalled check gives the job to
 * the other worker, which runs the same attempt's runtime again; the turn commits exactly once. (A
 * stage of several runtimes runs inline in the turn job too: the retry runs those without an output
 * again, reusing what was recorded.) When the jobs are lost with Redis too, the sweeper enqueues the session's pending execution
 * again, which claims a new attempt. The 60 s bounds below are hang guards only; the measured times
 * are logged.
 */
describe('worker killed in the middle of a runtime (default timings)', () => {
  let crash: CrashStack;
  let stack: Stack;
  let db: Client;
  let redis: IORedis;
  beforeAll(async () => {
    // slow model calls so the kill lands while the call is out; lock and sweep timings are the defaults
    crash = await crashStack({ workers: 2, workerEnv: { COVEL_EMULATOR_DELAY_MS: '2500' } });
    ({ stack, db, redis } = crash);
  }, 120_000);
  afterAll(() => crash?.stop(), 60_000);

  async function eventTypes(sessionId: string): Promise<{ type: string; attempt: number | null }[]> {
    const r = await db.query(`select type, (data->>'attempt')::int as attempt from events where stream_id = $1 order by stream_version`, [sessionId]);
    return r.rows as { type: string; attempt: number | null }[];
  }
  const count = (events: { type: string }[], type: string) => events.filter((e) => e.type === type).length;

  it('the runtime runs again on the other worker under the same attempt; the turn commits exactly once; later inputs run in order', async () => {
    const { client } = stack;
    const { id } = await client.createSession();
    const { executionId, turnId } = await client.submit(id, 'Cross the bridge');

    // the execution's model call is out: kill the worker running its runtime
    const victimId = await crash.workerRunning(executionId, 'llm.calling@1');
    expect(victimId).toMatch(/^w[12]$/);
    await crash.kill(victimId);
    const killedAt = Date.now();
    expect((await client.execution(executionId)).status).toBe('running');

    await client.waitFor(executionId, 60_000);
    console.log(`worker kill -9 during a runtime: committed ${Date.now() - killedAt} ms after the kill`);
    const events = await eventTypes(id);
    // the turn job kept its claim (one attempt); the runtime call went out twice (the killed one
    // and its retry), both recorded under that attempt; one answer, one output, one commit
    expect(count(events, 'execution.started@1')).toBe(1);
    expect(events.filter((e) => e.type === 'llm.calling@1')).toEqual([
      { type: 'llm.calling@1', attempt: 1 },
      { type: 'llm.calling@1', attempt: 1 },
    ]);
    expect(count(events, 'llm.responded@1')).toBe(1);
    expect(count(events, 'runtime.output.produced@1')).toBe(1);
    expect(count(events, 'turn.committed@1')).toBe(1);
    expect((await client.request<{ attempts: number; status: string }>('GET', `/v1/executions/${executionId}`)).attempts).toBe(1);
    // both requests are visible to the tenant (the trace projection may trail the commit a little)
    let calls: { executionId: string }[] = [];
    for (let i = 0; i < 100 && calls.length < 2; i++, await sleep(100)) {
      calls = (await client.request<{ executionId: string }[]>('GET', `/v1/sessions/${id}/llm-calls`)).filter((c) => c.executionId === executionId);
    }
    expect(calls).toHaveLength(2);

    // later inputs, posted one after the other without waiting: each runs after the one before, in order
    const later = [];
    for (const text of ['Keep walking', 'Look back', 'Run']) later.push(await client.submit(id, text));
    for (const l of later) await client.waitFor(l.executionId, 60_000);
    const messages = await client.messages(id);
    expect(messages.map((m) => [m.turnId, m.role])).toEqual(
      [turnId, ...later.map((l) => l.turnId)].flatMap((t) => [
        [t, 'user'],
        [t, 'assistant'],
      ]),
    );
    expect(messages.map((m) => (m as unknown as { order: number }).order)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(count(await eventTypes(id), 'turn.committed@1')).toBe(4);
  }, 180_000);

  it('jobs lost with Redis along with the worker: the sweeper enqueues the execution again, a new attempt commits exactly once', async () => {
    // two live workers again (the first test killed one)
    if (stack.workers.filter((w) => w.child.exitCode === null && w.child.signalCode === null).length < 2) stack.workers.push(await stack.startWorker('w3'));
    const { client } = stack;
    const { id } = await client.createSession();
    const { executionId } = await client.submit(id, 'Light the lamp');

    const victimId = await crash.workerRunning(executionId, 'llm.calling@1');
    await crash.kill(victimId);
    const killedAt = Date.now();
    // Redis restarted with no persistence: every key of this deployment is gone, the jobs with them
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${stack.env.COVEL_QUEUE_PREFIX}:*`, 'COUNT', 500);
      if (keys.length) await redis.del(...keys);
      cursor = next;
    } while (cursor !== '0');

    await client.waitFor(executionId, 60_000);
    console.log(`jobs lost with Redis: committed ${Date.now() - killedAt} ms after the kill`);
    const events = await eventTypes(id);
    expect(events.filter((e) => e.type === 'execution.started@1').map((e) => e.attempt)).toEqual([1, 2]);
    expect(events.filter((e) => e.type === 'runtime.output.produced@1').map((e) => e.attempt)).toEqual([2]);
    expect(count(events, 'turn.committed@1')).toBe(1);
    const execution = await client.request<{ attempts: number; workerId: string }>('GET', `/v1/executions/${executionId}`);
    expect(execution.attempts).toBe(2);
    expect(execution.workerId).not.toBe(victimId);
    expect((await client.messages(id)).map((m) => m.role)).toEqual(['user', 'assistant']);
  }, 120_000);

  it('an Emberback turn killed mid-stage (its runtimes run at once in the turn job): the job re-runs elsewhere under the same attempt, every recorded reply and output is reused, each tool completion recorded once, one commit', async () => {
    if (stack.workers.filter((w) => w.child.exitCode === null && w.child.signalCode === null).length < 2) stack.workers.push(await stack.startWorker('w4'));
    const { client } = stack;
    const { id } = await client.createSession({ worldId: 'emberback' });
    const { executionId } = await client.submit(id, 'Ask the ferryman about the tide');

    // a tool call is recorded (with its reply, before the tool runs): a stage of agents is running in the
    // turn job. Not `tool.completed@1`: the answers of the stage's calls, sent together, are recorded
    // together (issue 33), so its tools end together and their outcomes go with the last output and the
    // commit, in one append: no moment is left between a tool's outcome and the commit to kill in.
    const victimId = await crash.workerRunning(executionId, 'tool.called@1');
    await crash.kill(victimId);
    const killedAt = Date.now();
    expect(await client.waitFor(executionId, 120_000)).toBe('committed');
    console.log(`worker kill -9 during an Emberback stage: committed ${Date.now() - killedAt} ms after the kill`);

    const r = await db.query(`select type, data from events where stream_id = $1 order by stream_version`, [id]);
    const events = r.rows as { type: string; data: Record<string, unknown> }[];
    const keys = (type: string, key: (d: Record<string, unknown>) => string) => events.filter((e) => e.type === type).map((e) => key(e.data));
    const once = (list: string[]) => expect(list.filter((k, i) => list.indexOf(k) !== i)).toEqual([]);
    // one claim (the job kept it), one commit
    expect(keys('execution.started@1', (d) => String(d.attempt))).toEqual(['1']);
    expect(keys('turn.committed@1', (d) => String(d.executionId))).toEqual([executionId]);
    // each runtime's output once, each reply once, each tool run once (what was recorded before the kill was reused)
    const outputs = keys('runtime.output.produced@1', (d) => `${String(d.pluginId)}/${String(d.runtimeId)}`);
    expect(outputs.length).toBeGreaterThan(2);
    once(outputs);
    once(keys('llm.responded@1', (d) => `${String(d.pluginId)}/${String(d.runtimeId)}#${String(d.step)}`));
    once(keys('tool.completed@1', (d) => `${String(d.pluginId)}/${String(d.runtimeId)}#${String(d.step)}/${String(d.toolCallId)}`));
    expect(events.filter((e) => e.type === 'runtime.output.produced@1').every((e) => e.data.attempt === 1)).toBe(true);
  }, 180_000);
});
