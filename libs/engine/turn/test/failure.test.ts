import { ProviderError } from '../../../providers';
import { claimExecution } from '../claim';
import { recordFailure } from '../failure';
import { loadSessionJournal } from '../../session/session-reads';
import { eventually, type TurnHarness, turnHarness } from './harness';

describe('failure recording', () => {
  let h: TurnHarness;
  beforeAll(async () => {
    h = await turnHarness();
  });
  afterAll(() => h.close());

  async function claim(job: { tenantId: string; sessionId: string; executionId: string }) {
    const journal = await loadSessionJournal(h.deps, job);
    return claimExecution(h.deps, job, journal, journal.get(job.executionId)!);
  }

  it('records execution.failed with the error code and hands the session off to its next input', async () => {
    const session = await h.session();
    const job = await h.input(session);
    const next = await h.input(session, 'and then');
    await claim(job);
    expect(await recordFailure(h.deps, job, { error: new ProviderError('context too long', 400, false), attempt: 1 })).toBe(true);
    const failed = (await h.events(job.sessionId)).filter((e) => e.type === 'execution.failed@1');
    expect(failed.map((e) => e.data)).toEqual([
      { executionId: job.executionId, turnId: job.turnId, attempt: 1, error: { code: 'PROVIDER_400', message: 'context too long' }, discarded: true },
    ]);
    await eventually(async () => h.enqueued.some((j) => j.executionId === next.executionId), 'the next input enqueued');
    expect(h.enqueued.filter((j) => j.sessionId === session.sessionId)).toEqual([{ ...session, executionId: next.executionId }]);
  });

  it('writes nothing for an attempt that is no longer current, or an execution that has ended', async () => {
    const job = await h.input(await h.session());
    await claim(job);
    await claim(job);
    expect(await recordFailure(h.deps, job, { error: new Error('stale'), attempt: 1 })).toBe(false);
    expect(await h.types(job.sessionId)).not.toContain('execution.failed@1');
    // without an attempt: whichever is current
    expect(await recordFailure(h.deps, job, { error: new Error('boom') })).toBe(true);
    expect(await recordFailure(h.deps, job, { error: new Error('again') })).toBe(false);
    const failed = (await h.events(job.sessionId)).filter((e) => e.type === 'execution.failed@1');
    expect(failed.map((e) => e.data)).toEqual([expect.objectContaining({ attempt: 2, error: { code: 'Error', message: 'boom' } })]);
  });

  it("records a plugin's error message whatever its text: emoji, ZWJ, RTL and CJK kept, a U+0000 or a lone surrogate (which jsonb refuses) as U+FFFD", async () => {
    const job = await h.input(await h.session());
    await claim(job);
    const message = 'plugin broke: 👩‍👩‍👧 مرحبا 地図 \u0000 \uD800 \uDC00 end';
    expect(await recordFailure(h.deps, job, { error: new Error(message), attempt: 1 })).toBe(true);
    const failed = (await h.events(job.sessionId)).filter((e) => e.type === 'execution.failed@1');
    expect(failed.map((e) => e.data)).toEqual([
      expect.objectContaining({ error: { code: 'Error', message: 'plugin broke: 👩‍👩‍👧 مرحبا 地図 \uFFFD \uFFFD \uFFFD end' } }),
    ]);
  });
});
