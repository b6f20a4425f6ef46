import { randomUUID } from 'node:crypto';
import { FencedOutError } from '../../errors';
import { claimExecution } from '../../turn/claim';
import { ExecutionRun } from '../fenced-append';
import { loadSessionJournal } from '../../session/session-reads';
import { type TurnHarness, turnHarness } from '../../turn/test/harness';

describe('the fenced append (ExecutionRun)', () => {
  let h: TurnHarness;
  beforeAll(async () => {
    h = await turnHarness();
  });
  afterAll(() => h.close());

  /** A claimed execution and its run for that attempt. */
  async function claimedRun() {
    const session = await h.session();
    const job = await h.input(session);
    const journal = await loadSessionJournal(h.deps, job);
    const attempt = (await claimExecution(h.deps, job, journal, journal.get(job.executionId)!))!;
    return { job, run: new ExecutionRun(h.deps.store, journal, job, attempt) };
  }

  const responded = (executionId: string, turnId: string) => ({
    type: 'llm.responded@1' as const,
    data: {
      executionId,
      turnId,
      callId: randomUUID(),
      pluginId: 'scene',
      runtimeId: 'scene',
      finishReason: 'stop',
      usage: { inputTokens: 1, outputTokens: 1, cachedInputTokens: 0 },
    },
  });

  it('an append that loses to another append of the session reads it, checks the fence again and lands after it', async () => {
    const { job, run } = await claimedRun();
    // another input lands first: the run's journal is one version behind
    const other = await h.input(job, 'meanwhile');
    let builds = 0;
    const version = await run.append((execution) => {
      builds++;
      return [responded(execution.executionId, execution.turnId)];
    });
    expect(builds).toBe(2);
    expect(version).toBe(run.journal.version);
    expect(await h.types(job.sessionId)).toEqual([
      'session.created@1',
      'player-input.submitted@1',
      'execution.started@1',
      'player-input.submitted@1',
      'llm.responded@1',
    ]);
    // the journal holds what came first
    expect(run.journal.get(other.executionId)?.status).toBe('pending');
  });

  it('a stale attempt cannot write: a newer claim fences it out', async () => {
    const { job, run } = await claimedRun();
    const journal = await loadSessionJournal(h.deps, job);
    expect(await claimExecution(h.deps, job, journal, journal.get(job.executionId)!)).toBe(2);
    await expect(run.append((e) => [responded(e.executionId, e.turnId)])).rejects.toBeInstanceOf(FencedOutError);
    expect((await h.types(job.sessionId)).filter((t) => t === 'llm.responded@1')).toHaveLength(0);
  });

  it('an ended execution cannot be written to, and a build of no events appends nothing', async () => {
    const { job, run } = await claimedRun();
    const before = await h.types(job.sessionId);
    expect(await run.append(() => [])).toBe(run.journal.version);
    expect(await h.types(job.sessionId)).toEqual(before);
    await run.append((e) => [
      { type: 'execution.failed@1', data: { executionId: e.executionId, turnId: e.turnId, attempt: run.attempt, error: { code: 'X', message: 'x' } } },
    ]);
    await expect(run.append((e) => [responded(e.executionId, e.turnId)])).rejects.toBeInstanceOf(FencedOutError);
    expect(() => run.execution).toThrow(FencedOutError);
  });

  it('a cancel appended by another writer fences the attempt out: its next append (a commit) never lands', async () => {
    const { job, run } = await claimedRun();
    const execution = run.execution;
    const version = await h.deps.store.streamVersion(job.sessionId);
    await h.deps.store.append({
      tenantId: job.tenantId,
      streamId: job.sessionId,
      expectedVersion: version,
      events: [{ type: 'execution.cancelled@1', data: { executionId: job.executionId, turnId: execution.turnId, keepPartial: false, by: 'tenant:t' } }],
    });
    await expect(run.append((e) => [responded(e.executionId, e.turnId)])).rejects.toBeInstanceOf(FencedOutError);
    expect(run.journal.get(job.executionId)?.status).toBe('cancelled');
    expect(run.journal.pending().map((e) => e.executionId)).not.toContain(job.executionId);
    expect((await h.types(job.sessionId)).slice(-1)).toEqual(['execution.cancelled@1']);
  });
});
