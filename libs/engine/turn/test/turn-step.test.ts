import { turnContext } from '../../../../test/support/turn-context';
import { ExecutionNotFoundError } from '../../errors';
import type { RuntimeJob, TurnJob, TurnStep } from '../../queue';
import { claimExecution } from '../claim';
import { runRuntimeStep } from '../runtime-step';
import { loadSessionJournal } from '../../session/session-reads';
import { turnStep } from '../turn-step';
import { eventually, type TurnHarness, turnHarness } from './harness';

const children = (step: TurnStep): RuntimeJob[] => (step.kind === 'awaitChildren' ? step.children : []);
const names = (step: TurnStep) => children(step).map((c) => `${c.pluginId}@${c.attempt}`);

describe('the turn step machine', () => {
  let h: TurnHarness;
  beforeAll(async () => {
    h = await turnHarness();
  });
  afterAll(() => h.close());

  const runAll = (step: TurnStep) => Promise.all(children(step).map((c) => runRuntimeStep(h.deps, c)));
  const count = async (sessionId: string, type: string) => (await h.types(sessionId)).filter((t) => t === type).length;

  it('claims once, waits for one stage at a time (one runtime job per missing output), commits once', async () => {
    const job = await h.input(await h.session());
    const ctx = turnContext();
    const first = await turnStep(h.deps, job, ctx);
    expect(ctx.claims).toEqual([1]);
    expect(names(first).sort()).toEqual(['mood@1', 'scene@1']);
    const { executionId, sessionId, tenantId } = job;
    expect(children(first)[0]).toEqual({ executionId, sessionId, tenantId, attempt: 1, pluginId: expect.any(String), runtimeId: expect.any(String) });
    // the turn job is run again before its children ended (it cannot be, but a copy could): same children
    expect(names(await turnStep(h.deps, job, ctx)).sort()).toEqual(['mood@1', 'scene@1']);
    await runAll(first);
    const second = await turnStep(h.deps, job, ctx);
    expect(names(second)).toEqual(['narrator@1']);
    await runAll(second);
    const third = await turnStep(h.deps, job, ctx);
    expect(names(third)).toEqual(['recap@1']);
    await runAll(third);
    expect(await turnStep(h.deps, job, ctx)).toEqual({ kind: 'done' });
    expect(ctx.claims).toEqual([1]);
    expect(await count(job.sessionId, 'turn.committed@1')).toBe(1);
    expect(await count(job.sessionId, 'execution.started@1')).toBe(1);
    expect((await h.deps.readModels.execution(job.tenantId, job.executionId))?.status).toBe('committed');
    // a late repeat of the job: nothing more
    const before = await h.types(job.sessionId);
    expect(await turnStep(h.deps, job, turnContext())).toEqual({ kind: 'done' });
    expect(await h.types(job.sessionId)).toEqual(before);
  });

  it('an execution behind an earlier pending one of its session ends at once, unclaimed', async () => {
    const session = await h.session();
    await h.input(session, 'first');
    const second = await h.input(session, 'second');
    const ctx = turnContext();
    expect(await turnStep(h.deps, second, ctx)).toEqual({ kind: 'done' });
    expect(ctx.claims).toEqual([]);
    expect(await count(session.sessionId, 'execution.started@1')).toBe(0);
  });

  it('a job whose claim is not the latest (a crash before it was kept, a newer claim) claims again; runtime jobs of the old attempt are fenced out', async () => {
    const job = await h.input(await h.session());
    const journal = await loadSessionJournal(h.deps, job);
    await claimExecution(h.deps, job, journal, journal.get(job.executionId)!); // attempt 1, never kept with the job
    const ctx = turnContext();
    const step = await turnStep(h.deps, job, ctx);
    expect(ctx.claims).toEqual([2]);
    expect(names(step).sort()).toEqual(['mood@2', 'scene@2']);
    // a stale job data (attempt 1 kept while attempt 2 is the latest): claims 3
    const stale = turnContext({ claimedAttempt: 1 });
    expect(names(await turnStep(h.deps, job, stale)).sort()).toEqual(['mood@3', 'scene@3']);
    expect(await runRuntimeStep(h.deps, children(step)[0])).toBe('fenced');
  });

  it('a job with a claimant finds its claim in the log: a later run of it (nothing kept with the job) goes on with that attempt; another job claims anew', async () => {
    const job = await h.input(await h.session());
    const first = turnContext({ claimant: 'job-a' });
    expect(names(await turnStep(h.deps, job, first)).sort()).toEqual(['mood@1', 'scene@1']);
    expect(first.claims).toEqual([1]);
    const started = (await h.events(job.sessionId)).filter((e) => e.type === 'execution.started@1');
    expect(started.map((e) => e.data)).toEqual([expect.objectContaining({ attempt: 1, claimant: 'job-a' })]);
    // the same job run again (a retry, a stalled job's re-run): its data holds no claim, the log does
    const again = turnContext({ claimant: 'job-a' });
    expect(names(await turnStep(h.deps, job, again)).sort()).toEqual(['mood@1', 'scene@1']);
    expect(again.claimedAttempt).toBe(1);
    expect(await count(job.sessionId, 'execution.started@1')).toBe(1);
    // a job of the same execution added anew (the sweeper's): another claimant, a new attempt fences the old one out
    const anew = turnContext({ claimant: 'job-b' });
    expect(names(await turnStep(h.deps, job, anew)).sort()).toEqual(['mood@2', 'scene@2']);
    // and the first job, run again after that, is no longer the latest claim's: it claims anew too
    const stale = turnContext({ claimant: 'job-a' });
    expect(names(await turnStep(h.deps, job, stale)).sort()).toEqual(['mood@3', 'scene@3']);
  });

  it('an execution that has ended (here: failed by a runtime job) ends the turn job and hands off to the next input', async () => {
    const session = await h.session();
    const job = await h.input(session, 'first');
    const next = await h.input(session, 'second');
    const ctx = turnContext();
    await turnStep(h.deps, job, ctx);
    // failed by a process that died before its own hand-off
    await h.deps.store.append({
      tenantId: session.tenantId,
      streamId: session.sessionId,
      expectedVersion: await h.deps.store.streamVersion(session.sessionId),
      events: [
        { type: 'execution.failed@1', data: { executionId: job.executionId, turnId: job.turnId, attempt: 1, error: { code: 'X', message: 'model gone' } } },
      ],
    });
    expect(h.enqueued.filter((j) => j.executionId === next.executionId)).toEqual([]);
    expect(await turnStep(h.deps, job, ctx)).toEqual({ kind: 'done' });
    await eventually(async () => h.enqueued.filter((j) => j.executionId === next.executionId).length >= 1, 'the next input enqueued');
    expect(await count(session.sessionId, 'turn.committed@1')).toBe(0);
  });

  it('a job naming an execution its session does not have is a not-found failure', async () => {
    const session = await h.session();
    const missing: TurnJob = { ...session, executionId: '00000000-0000-4000-8000-00000000dead' };
    await expect(turnStep(h.deps, missing, turnContext())).rejects.toBeInstanceOf(ExecutionNotFoundError);
  });
});
