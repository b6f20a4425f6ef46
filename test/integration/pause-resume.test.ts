import { join } from 'node:path';
import { type CrashStack, crashStack, sleep } from '../support/crash-stack';

/** The JSON inside `<runtime-inputs>` … `</runtime-inputs>` of a recorded request body. */
function runtimeInputs(body: string): string {
  const text = (JSON.parse(body) as { messages: { content: unknown }[] }).messages.map((m) => (typeof m.content === 'string' ? m.content : '')).join('\n');
  const match = /<runtime-inputs>\n([\s\S]*?)\n<\/runtime-inputs>/.exec(text);
  if (!match) throw new Error('no <runtime-inputs> in the request');
  return match[1];
}

/** The user messages of a recorded request (the protected current turn is among them). */
const userMessages = (body: string) =>
  (JSON.parse(body) as { messages: { role: string; content: unknown }[] }).messages.filter((m) => m.role === 'user').map((m) => m.content);

/**
 * Issue 16 acceptance: a runtime suspends on a tool (`ctx.suspend`), the worker process is killed
 * while the execution waits, the API resumes it and another worker process finishes it: the same
 * input slots and the same protected range as before the pause (compared in the recorded
 * requests), one commit; every request of the turn re-derives byte for byte.
 */
describe('a suspended runtime resumed on another worker (PostgreSQL + BullMQ)', () => {
  let crash: CrashStack;
  beforeAll(async () => {
    crash = await crashStack({ workers: 1, env: { COVEL_PLUGINS_DIR: join(__dirname, '..', 'fixtures', 'pause-plugins') } });
  }, 120_000);
  afterAll(() => crash?.stop(), 60_000);

  const logOf = async (sessionId: string) =>
    (await crash.db.query(`select type, data from events where stream_id = $1 order by stream_version`, [sessionId])).rows as {
      type: string;
      data: Record<string, unknown>;
    }[];

  it('waits, survives its worker, resumes on another: same input slots, same protected range, one commit', async () => {
    const { client } = crash.stack;
    const { id } = await client.createSession();
    const { executionId, turnId } = await client.submit(id, 'Open the vault');
    let view = await client.execution(executionId);
    for (const deadline = Date.now() + 60_000; view.status !== 'waiting' && Date.now() < deadline; await sleep(50)) {
      view = await client.execution(executionId);
      expect(['queued', 'running', 'waiting']).toContain(view.status);
    }
    expect(view).toMatchObject({ status: 'waiting', waitingFor: { kind: 'approval', prompt: 'Open the vault?' } });

    // `waiting` shows from the suspension's append, a moment before the turn job that recorded it
    // ends: killed in between, w1 would leave that job (its attempt's claim kept with it) to the
    // stalled-job check, and w2 would go on under w1's claim after the resume, no claim of its own.
    // The execution waits with no job once every one of its jobs has ended.
    let jobs = await crash.jobsOf(executionId);
    for (const deadline = Date.now() + 30_000; jobs > 0 && Date.now() < deadline; await sleep(20)) jobs = await crash.jobsOf(executionId);
    expect(jobs).toBe(0);
    // the only worker dies while the execution waits; nothing of the execution is lost or failed
    expect(await crash.kill('w1')).not.toBeUndefined();
    await crash.stack.startWorker('w2');
    expect((await client.execution(executionId)).status).toBe('waiting');

    await client.resume(executionId, { approved: true });
    expect(await client.waitFor(executionId, 90_000)).toBe('committed');

    const log = await logOf(id);
    const of = (type: string) => log.filter((e) => e.type === type);
    // the resume's job is a new one: w2 claims the next attempt
    expect(of('execution.started@1').map((e) => [e.data.attempt, e.data.workerId])).toEqual([
      [1, 'w1'],
      [2, 'w2'],
    ]);
    expect(of('execution.failed@1')).toHaveLength(0);
    expect(of('execution.suspended@1')).toHaveLength(1);
    expect(of('execution.resumed@1')).toHaveLength(1);
    expect(of('turn.committed@1')).toHaveLength(1);

    const calls = of('llm.calling@1').filter((e) => e.data.pluginId === 'gate');
    expect(calls.map((c) => c.data.step)).toEqual([1, 2]);
    const [before, after] = calls.map((c) => c.data.body as string);
    // the same input slots as before the pause, and as the continuation froze them
    expect(runtimeInputs(after)).toBe(runtimeInputs(before));
    const suspended = of('execution.suspended@1')[0].data as { inputs: { binding: string; value: unknown }[]; currentTurnUserMessages: unknown[] };
    expect(suspended.inputs.map((i) => [i.binding, i.value])).toEqual([['mood', 'tense']]);
    // the same protected range: the current turn's user messages, then the resume's tool result after them
    expect(suspended.currentTurnUserMessages).toEqual([{ role: 'user', content: 'Open the vault' }]);
    expect(userMessages(after)).toEqual(userMessages(before));
    expect(after).toContain(JSON.stringify(JSON.stringify({ ok: true, data: { approved: true } })).slice(1, -1));

    // replay: every request before and after the pause re-derives byte for byte
    const audit = await client.request<{ identical: boolean; calls: unknown[] }>('GET', `/v1/sessions/${id}/turns/${turnId}/audit`);
    expect(audit.calls.length).toBeGreaterThanOrEqual(3);
    expect(audit.identical).toBe(true);
  }, 240_000);
});
