import { join } from 'node:path';
import { type CrashStack, crashStack } from '../support/crash-stack';

/**
 * Issue 11: a worker SIGKILLed inside an agent loop, after its tool call was executed and recorded
 * and before the next model call (the fixture's PreLLMCall hook holds that call). The runtime job
 * is retried on the other worker, which resumes the loop from the log: the recorded model call is
 * not sent again and the recorded tool call is not executed again; the turn commits once.
 */
describe('worker killed between a tool call and the next model call (PostgreSQL + BullMQ)', () => {
  let crash: CrashStack;
  beforeAll(async () => {
    // the API and the workers load the same plugins; a short job lock and stalled check: the killed
    // worker's job is taken over within ~3 s instead of ~10 s (a live worker renews its lock)
    crash = await crashStack({
      workers: 2,
      env: { COVEL_PLUGINS_DIR: join(__dirname, '..', 'fixtures', 'crash-tool-plugins') },
      workerEnv: { COVEL_JOB_LOCK_MS: '2000', COVEL_STALLED_INTERVAL_MS: '500' },
    });
  }, 120_000);
  afterAll(() => crash?.stop(), 60_000);

  const typesOf = async (sessionId: string) =>
    (await crash.db.query(`select type, data->>'step' as step from events where stream_id = $1 order by stream_version`, [sessionId])).rows as {
      type: string;
      step: string | null;
    }[];

  it('the retried job resumes from the log: each model call and the tool run exactly once, one commit', async () => {
    const { client } = crash.stack;
    const { id } = await client.createSession();
    const { executionId } = await client.submit(id, 'Write it down');
    // the tool has run and its outcome is recorded: the victim is now holding the next model call
    const victim = await crash.workerRunning(executionId, 'tool.completed@1');
    expect(victim).toMatch(/^w[12]$/);
    expect((await typesOf(id)).filter((e) => e.type === 'llm.calling@1')).toHaveLength(1); // the next call is not out yet
    await crash.kill(victim);

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
