import { RuntimeNotFoundError } from '../../errors';
import { rebuildRequests } from '../../audit/request-rebuild';
import type { TurnJob } from '../../queue';
import { claimExecution } from '../claim';
import { historyReadLimit } from '../../execution/deps';
import { runRuntimeStep } from '../runtime-step';
import { loadSessionJournal } from '../../session/session-reads';
import { type TurnHarness, turnHarness } from './harness';

describe('one runtime step', () => {
  let h: TurnHarness;
  beforeAll(async () => {
    // slow enough that two copies of one job both have their call out before either answer
    h = await turnHarness({ emulatorDelayMs: 100 });
  });
  afterAll(() => h.close());

  async function claimed(): Promise<TurnJob & { attempt: number }> {
    const job = await h.input(await h.session());
    const journal = await loadSessionJournal(h.deps, job);
    return { ...job, attempt: (await claimExecution(h.deps, job, journal, journal.get(job.executionId)!))! };
  }

  it('records the call, calls the model once, records the output; the recorded request rebuilds byte-identical from the log', async () => {
    const job = await claimed();
    const requests = h.emulator.requests.length;
    expect(await runRuntimeStep(h.deps, { ...job, pluginId: 'scene', runtimeId: 'scene' })).toBe('produced');
    expect(h.emulator.requests.length).toBe(requests + 1);
    const events = await h.events(job.sessionId);
    expect(events.slice(-3).map((e) => e.type)).toEqual(['llm.calling@1', 'llm.responded@1', 'runtime.output.produced@1']);
    expect(events.at(-1)!.data).toMatchObject({ attempt: 1, stage: 'pre-turn', pluginId: 'scene', runtimeId: 'scene', outputKind: 'none' });
    const rebuilt = await rebuildRequests(events, h.deps.catalog, h.deps.providers, h.deps.worlds, { historyReadLimit: historyReadLimit(h.deps) });
    expect(rebuilt.map((c) => c.identical)).toEqual([true]);

    // an output already produced is reused: no second call
    expect(await runRuntimeStep(h.deps, { ...job, pluginId: 'scene', runtimeId: 'scene' })).toBe('reused');
    expect(h.emulator.requests.length).toBe(requests + 1);
  });

  it('a job of an attempt that is no longer current does nothing', async () => {
    const job = await claimed();
    const journal = await loadSessionJournal(h.deps, job);
    await claimExecution(h.deps, job, journal, journal.get(job.executionId)!);
    const before = await h.types(job.sessionId);
    expect(await runRuntimeStep(h.deps, { ...job, attempt: 1, pluginId: 'scene', runtimeId: 'scene' })).toBe('fenced');
    expect(await h.types(job.sessionId)).toEqual(before);
  });

  it('two copies of one job at once (a lost lock): the output is recorded once', async () => {
    const job = await claimed();
    const runtime = { ...job, pluginId: 'mood', runtimeId: 'mood' };
    const results = await Promise.all([runRuntimeStep(h.deps, runtime), runRuntimeStep(h.deps, runtime)]);
    expect(results.filter((r) => r === 'produced')).toHaveLength(1);
    const types = await h.types(job.sessionId);
    expect(types.filter((t) => t === 'runtime.output.produced@1')).toHaveLength(1);
    // every call that went out is on record with its answer
    expect(types.filter((t) => t === 'llm.responded@1')).toHaveLength(types.filter((t) => t === 'llm.calling@1').length);
  });

  it('the output that completes the last stage commits the turn in the same append and hands the session off', async () => {
    const job = await claimed();
    const next = await h.input({ tenantId: job.tenantId, sessionId: job.sessionId }, 'the next input');
    for (const pluginId of ['scene', 'mood', 'narrator']) {
      expect(await runRuntimeStep(h.deps, { ...job, pluginId, runtimeId: pluginId })).toBe('produced');
      expect(await h.types(job.sessionId)).not.toContain('turn.committed@1');
    }
    expect(h.enqueued.filter((j) => j.executionId === next.executionId)).toEqual([]);
    expect(await runRuntimeStep(h.deps, { ...job, pluginId: 'recap', runtimeId: 'recap' })).toBe('produced');
    const events = await h.events(job.sessionId);
    const tail = events.slice(-3);
    expect(tail.map((e) => e.type)).toEqual(['llm.responded@1', 'runtime.output.produced@1', 'turn.committed@1']);
    // one append: one transaction, so one recorded_at (the transaction's start)
    expect(new Set(tail.map((e) => e.recordedAt)).size).toBe(1);
    // the input, then the story output (recap's output is `none`: not history)
    const narrator = events.find((e) => e.type === 'runtime.output.produced@1' && e.data.runtimeId === 'narrator');
    const committed = tail[2].type === 'turn.committed@1' ? tail[2].data.messages : [];
    expect(committed.map((m) => [m.role, m.runtimeId])).toEqual([
      ['user', null],
      ['assistant', 'narrator'],
    ]);
    expect(committed[1].messageId).toBe(narrator?.type === 'runtime.output.produced@1' ? narrator.data.messageId : 'none');
    expect((await h.deps.readModels.execution(job.tenantId, job.executionId))?.status).toBe('committed');
    expect(h.enqueued.filter((j) => j.executionId === next.executionId)).toHaveLength(1);
  });

  it('a runtime the catalog does not have is a permanent failure', async () => {
    const job = await claimed();
    await expect(runRuntimeStep(h.deps, { ...job, pluginId: 'gone', runtimeId: 'gone' })).rejects.toBeInstanceOf(RuntimeNotFoundError);
  });
});
