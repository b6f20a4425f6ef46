import { claimExecution } from '../claim';
import { loadSessionJournal } from '../../session/session-reads';
import { type TurnHarness, turnHarness } from './harness';

describe('the claim', () => {
  let h: TurnHarness;
  beforeAll(async () => {
    h = await turnHarness();
  });
  afterAll(() => h.close());

  it('appends execution.started with the next attempt and this worker, and the journal shows it', async () => {
    const job = await h.input(await h.session());
    for (const expected of [1, 2]) {
      const journal = await loadSessionJournal(h.deps, job);
      expect(await claimExecution(h.deps, job, journal, journal.get(job.executionId)!)).toBe(expected);
      expect(journal.get(job.executionId)!.latestAttempt).toBe(expected);
    }
    const started = (await h.events(job.sessionId)).filter((e) => e.type === 'execution.started@1').map((e) => e.data);
    expect(started).toEqual([expect.objectContaining({ attempt: 1, workerId: 'harness' }), expect.objectContaining({ attempt: 2, workerId: 'harness' })]);
  });

  it('two claims from the same read: one wins, the other is told the session moved on and writes nothing', async () => {
    const job = await h.input(await h.session());
    const [a, b] = await Promise.all([loadSessionJournal(h.deps, job), loadSessionJournal(h.deps, job)]);
    const claims = await Promise.all([claimExecution(h.deps, job, a, a.get(job.executionId)!), claimExecution(h.deps, job, b, b.get(job.executionId)!)]);
    expect(claims.sort()).toEqual([1, null]);
    expect((await h.types(job.sessionId)).filter((t) => t === 'execution.started@1')).toHaveLength(1);
  });
});
