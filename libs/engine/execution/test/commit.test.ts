import { randomUUID } from 'node:crypto';
import { FencedOutError } from '../../errors';
import { claimExecution } from '../../turn/claim';
import { commitTurn } from '../commit';
import { ExecutionRun } from '../fenced-append';
import { runRuntimeStep } from '../../turn/runtime-step';
import { loadSessionJournal } from '../../session/session-reads';
import { type TurnHarness, turnHarness } from '../../turn/test/harness';

describe('the commit', () => {
  let h: TurnHarness;
  beforeAll(async () => {
    h = await turnHarness();
  });
  afterAll(() => h.close());

  /**
   * A claimed execution with every runtime's output produced but not committed, and a run of its
   * attempt. (A runtime job commits with the last output; outputs without a commit come from a log
   * written before that, or from a catalog that lost a runtime since: the turn job commits them.)
   */
  async function produced() {
    const job = await h.input(await h.session(), 'Light the lamp');
    let journal = await loadSessionJournal(h.deps, job);
    const attempt = (await claimExecution(h.deps, job, journal, journal.get(job.executionId)!))!;
    const [last, ...rest] = [...h.deps.catalog.all()].reverse();
    for (const r of rest.reverse()) await runRuntimeStep(h.deps, { ...job, attempt, pluginId: r.pluginId, runtimeId: r.runtimeId });
    journal = await loadSessionJournal(h.deps, job);
    const run = new ExecutionRun(h.deps.store, journal, job, attempt);
    await run.append((e) => [
      {
        type: 'runtime.output.produced@1',
        data: {
          executionId: e.executionId,
          turnId: e.turnId,
          attempt,
          stage: last.stage,
          pluginId: last.pluginId,
          runtimeId: last.runtimeId,
          outputKind: last.manifest.outputKind,
          messageId: randomUUID(),
          text: 'recap',
        },
      },
    ]);
    return { job, run };
  }

  it('commits the input and the story outputs in catalog order, once', async () => {
    const { job, run } = await produced();
    await commitTurn(h.deps.catalog, run);
    const committed = (await h.events(job.sessionId)).filter((e) => e.type === 'turn.committed@1');
    expect(committed).toHaveLength(1);
    const data = committed[0].data as { attempt: number; turnId: string; messages: { role: string; pluginId: string | null; text: string }[] };
    expect(data).toMatchObject({ attempt: 1, turnId: job.turnId });
    // mood, scene and recap produce no history text: the input and the narrator's story
    expect(data.messages.map((m) => [m.role, m.pluginId])).toEqual([
      ['user', null],
      ['assistant', 'narrator'],
    ]);
    expect(data.messages[0].text).toBe('Light the lamp');
    // again, or from another copy: the execution has ended, nothing is written
    await expect(commitTurn(h.deps.catalog, run)).rejects.toBeInstanceOf(FencedOutError);
    const copy = new ExecutionRun(h.deps.store, await loadSessionJournal(h.deps, job), job, run.attempt);
    await expect(commitTurn(h.deps.catalog, copy)).rejects.toBeInstanceOf(FencedOutError);
    expect((await h.types(job.sessionId)).filter((t) => t === 'turn.committed@1')).toHaveLength(1);
  });

  it('a stale attempt cannot commit', async () => {
    const { job, run } = await produced();
    const journal = await loadSessionJournal(h.deps, job);
    await claimExecution(h.deps, job, journal, journal.get(job.executionId)!);
    await expect(commitTurn(h.deps.catalog, run)).rejects.toBeInstanceOf(FencedOutError);
    expect(await h.types(job.sessionId)).not.toContain('turn.committed@1');
  });
});
