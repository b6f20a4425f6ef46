import { turnContext } from '../../../../test/support/turn-context';
import type { RuntimeJob, TurnJob } from '../../queue';
import { claimExecution } from '../claim';
import { loadSessionJournal } from '../../session/session-reads';
import type { TurnRunner } from '../turn-runner';
import { eventually, runnerNotingRuntimeJobs, type TurnHarness, turnHarness } from './harness';

describe('the turn runner: turns through the real in-process queue, and what a failure means for a job', () => {
  let h: TurnHarness;
  let runner!: TurnRunner;
  /** The runtime jobs the queue ran (none: every stage runs inline in its turn job). */
  const runtimeJobs: RuntimeJob[] = [];
  beforeAll(async () => {
    h = await turnHarness({
      handlers: runnerNotingRuntimeJobs(runtimeJobs, (made) => (runner = made)),
    });
  });
  afterAll(() => h.close());

  const committed = async (sessionId: string) =>
    (await h.events(sessionId)).filter((e) => e.type === 'turn.committed@1').map((e) => (e.data as { executionId: string }).executionId);
  const status = async (job: TurnJob) => (await h.deps.readModels.execution(job.tenantId, job.executionId))?.status;

  it('three inputs of a session, only the first enqueued (as the API does): each end hands off to the next, all commit once, in order', async () => {
    const session = await h.session();
    const jobs = [await h.input(session, 'one'), await h.input(session, 'two'), await h.input(session, 'three')];
    await h.queue.enqueue(jobs[0]);
    await eventually(async () => (await committed(session.sessionId)).length === 3, 'three commits');
    expect(await committed(session.sessionId)).toEqual(jobs.map((j) => j.executionId));
    const events = await h.events(session.sessionId);
    // one claim each, and no execution started before the one before it had committed
    expect(events.filter((e) => e.type === 'execution.started@1')).toHaveLength(3);
    const order = events
      .filter((e) => e.type === 'execution.started@1' || e.type === 'turn.committed@1')
      .map((e) => `${e.type} ${(e.data as { executionId: string }).executionId}`);
    expect(order).toEqual(jobs.flatMap((j) => [`execution.started@1 ${j.executionId}`, `turn.committed@1 ${j.executionId}`]));
  });

  it('a provider error the provider will repeat fails the execution from the runtime job, which completes; the session goes on', async () => {
    const session = await h.session();
    const failing = await h.input(session, 'shout');
    const next = await h.input(session, 'whisper');
    h.emulator.injectFault({ status: 400, times: 1, message: 'context too long' });
    await h.queue.enqueue(failing);
    await eventually(async () => (await status(next)) === 'committed', 'the next input committed');
    expect(await status(failing)).toBe('failed');
    const failed = (await h.events(session.sessionId)).filter((e) => e.type === 'execution.failed@1');
    expect(failed.map((e) => e.data)).toEqual([
      expect.objectContaining({ executionId: failing.executionId, error: { code: 'PROVIDER_400', message: expect.stringContaining('context too long') } }),
    ]);
    expect(await committed(session.sessionId)).toEqual([next.executionId]);
  });

  it('a retryable failure is thrown for the queue to retry, except on the last attempt: then the execution fails', async () => {
    const job = await h.input(await h.session(), 'wait');
    const journal = await loadSessionJournal(h.deps, job);
    const attempt = (await claimExecution(h.deps, job, journal, journal.get(job.executionId)!))!;
    const runtime = { ...job, attempt, pluginId: 'mood', runtimeId: 'mood' };
    // the SDK's own retries (3) are spent first: 4 answers of 503 make one failed attempt
    h.emulator.injectFault({ status: 503, times: 4 });
    await expect(runner.runtime(runtime, { attemptsMade: 0, maxAttempts: 5 })).rejects.toMatchObject({ code: 'PROVIDER_503', category: 'unavailable' });
    expect(await h.types(job.sessionId)).not.toContain('execution.failed@1');
    h.emulator.injectFault({ status: 503, times: 4 });
    expect(await runner.runtime(runtime, { attemptsMade: 4, maxAttempts: 5 })).toEqual({ kind: 'done' });
    expect((await h.events(job.sessionId)).filter((e) => e.type === 'execution.failed@1').map((e) => e.data)).toEqual([
      expect.objectContaining({ attempt: 1, error: expect.objectContaining({ code: 'PROVIDER_503' }) }),
    ]);
    // a runtime job of an attempt fenced out, and a turn job of an ended execution: done, quietly
    expect(await runner.runtime({ ...runtime, pluginId: 'scene', runtimeId: 'scene' }, { attemptsMade: 0, maxAttempts: 5 })).toEqual({ kind: 'done' });
    expect(await runner.turn(job, turnContext())).toEqual({ kind: 'done' });
  }, 60_000);

  it('every stage runs inline in the turn job, the two runtimes of pre-turn at once: no runtime job, one output each, one commit', async () => {
    const job = await h.input(await h.session(), 'inline');
    await h.queue.enqueue(job);
    await eventually(async () => (await status(job)) === 'committed', 'the turn committed');
    const events = await h.events(job.sessionId);
    const outputs = events.filter((e) => e.type === 'runtime.output.produced@1').map((e) => (e.data as { runtimeId: string }).runtimeId);
    // pre-turn holds two runtimes (mood, scene), the narrator's stage and post-turn one each (recap): all run in the turn job
    expect([...outputs].sort()).toEqual(['mood', 'narrator', 'recap', 'scene']);
    expect(runtimeJobs.filter((r) => r.executionId === job.executionId)).toEqual([]);
    // one claim, carried by the first append of the siblings; one commit
    expect(events.filter((e) => e.type === 'execution.started@1')).toHaveLength(1);
    expect(events.filter((e) => e.type === 'turn.committed@1')).toHaveLength(1);
  });

  it('the runtimes of a stage run inline watch the execution’s end once together, let go when the stage is over', async () => {
    const watches: { executionId: string; signal: AbortSignal }[] = [];
    h.deps.ends = {
      watch: async ({ executionId, signal }) => {
        watches.push({ executionId, signal });
        // no end is heard: the turn commits
        return { ended: new Promise(() => undefined) };
      },
    };
    try {
      const job = await h.input(await h.session(), 'watched');
      await h.queue.enqueue(job);
      await eventually(async () => (await status(job)) === 'committed', 'the turn committed');
      const mine = watches.filter((w) => w.executionId === job.executionId);
      // pre-turn (mood, scene) one watch for both; the narrator's stage and post-turn (one runtime each) one each
      expect(mine).toHaveLength(3);
      // each let go once its stage was over
      expect(mine.every((w) => w.signal.aborted)).toBe(true);
    } finally {
      delete h.deps.ends;
    }
  });

  it('an inline runtime fails as its runtime job would: a retryable failure fails the turn job attempt once its siblings end, the retry keeps the claim; the last attempt fails the execution', async () => {
    const job = await h.input(await h.session(), 'retry inline');
    const ctx = turnContext();
    // both pre-turn runtimes run at once in the turn job: each spends the SDK's 3 retries (4 answers of 503 each) and fails
    h.emulator.injectFault({ status: 503, times: 8 });
    await expect(runner.turn(job, ctx)).rejects.toMatchObject({ code: 'PROVIDER_503' });
    expect(await h.types(job.sessionId)).not.toContain('execution.failed@1');
    // the retry: the same claim, the same attempt, one output each and one commit
    expect(await runner.turn(job, { ...ctx, attemptsMade: 1 })).toEqual({ kind: 'done' });
    const events = await h.events(job.sessionId);
    expect(ctx.claims).toEqual([1]);
    expect(events.filter((e) => e.type === 'execution.started@1')).toHaveLength(1);
    const outputs = events.filter((e) => e.type === 'runtime.output.produced@1').map((e) => e.data as { attempt: number; runtimeId: string });
    expect(outputs.map((o) => o.runtimeId).sort()).toEqual(['mood', 'narrator', 'recap', 'scene']);
    expect(new Set(outputs.map((o) => o.attempt))).toEqual(new Set([1]));
    expect(events.filter((e) => e.type === 'turn.committed@1')).toHaveLength(1);
    expect(runtimeJobs.filter((r) => r.executionId === job.executionId)).toEqual([]);

    // on the turn job's last attempt an inline runtime's failure fails the execution, and the job ends
    const last = await h.input(await h.session(), 'last attempt');
    const lastCtx = turnContext({ attemptsMade: 4, maxAttempts: 5 });
    h.emulator.injectFault({ status: 503, times: 8 });
    expect(await runner.turn(last, lastCtx)).toEqual({ kind: 'done' });
    expect((await h.events(last.sessionId)).filter((e) => e.type === 'execution.failed@1').map((e) => e.data)).toEqual([
      expect.objectContaining({ attempt: 1, error: expect.objectContaining({ code: 'PROVIDER_503' }) }),
    ]);
    expect(await h.types(last.sessionId)).not.toContain('turn.committed@1');
  }, 90_000);

  it('a permanent failure of one runtime of an inline stage fails the execution once; its sibling is fenced out or done, the job ends', async () => {
    const job = await h.input(await h.session(), 'permanent');
    h.emulator.injectFault({ status: 400, times: 1, message: 'context too long' });
    expect(await runner.turn(job, turnContext())).toEqual({ kind: 'done' });
    const events = await h.events(job.sessionId);
    expect(events.filter((e) => e.type === 'execution.failed@1').map((e) => e.data)).toEqual([
      expect.objectContaining({ attempt: 1, error: { code: 'PROVIDER_400', message: expect.stringContaining('context too long') } }),
    ]);
    expect(events.filter((e) => e.type === 'execution.started@1')).toHaveLength(1);
    expect(events.map((e) => e.type)).not.toContain('turn.committed@1');
    expect(events.filter((e) => e.type === 'runtime.output.produced@1').length).toBeLessThanOrEqual(1);
  });
});
