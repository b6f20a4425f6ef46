import type { Reply, ScriptedCall } from '../../../emulator';
import { rebuildInline, type StoredEvent } from '../../../events';
import { behaviour, calls } from '../../../../test/fixtures/compaction-plugins/compactor/server';
import { dumpProjections } from '../../../../test/support/projection-dump';
import { HistoryTooLongError } from '../../history';
import { HistoryFold } from '../../history/history-fold';
import { loadRuntimeHistory } from '../../history/history-loader';
import { engineInlineProjections } from '../../startup/projections';
import { rebuildRequests } from '../../audit/request-rebuild';
import { auditTurn } from '../../audit/turn-audit';
import { historyReadLimit } from '../../execution/deps';
import { eventually, type TurnHarness } from '../../turn/test/harness';
import { compactionHarness, historyCount } from './compaction-fixtures';
import { barrierRuntime } from '../compaction-barrier';
import { compactionWindows } from '../trigger';

/** The summary model answers briefly (and names how many lines it read); everything else gets the emulator's own reply. */
function script(call: ScriptedCall): Reply | undefined {
  if (!(call.transcript[0]?.content ?? '').startsWith('Summarize the story so far')) return undefined;
  const lines = (call.transcript[1]?.content ?? '').split('\n').length;
  return { kind: 'text', text: `The wanderer crossed ${lines} rooms of the old keep.` };
}

type Data = Record<string, unknown>;
const of = (events: StoredEvent[], type: string, executionId?: string) =>
  events.filter((e) => e.type === type && (executionId === undefined || (e.data as Data).executionId === executionId)).map((e) => e.data as Data);

jest.setTimeout(60_000);

describe('the compaction barrier in real turns (windowed: maxTurns in pre-turn; teller and critic: shared history in narrative; compactor: history.compact@2)', () => {
  let h: TurnHarness;
  beforeAll(async () => {
    // the glancer (a window in the narrative stage) has its own tests: barrier-windowed-stage.test.ts
    h = await compactionHarness({ keep: (p) => p.manifest.id !== 'glancer', script });
  });
  afterAll(() => h.close());
  beforeEach(() => {
    behaviour.mode = 'ok';
  });

  const turn = async (session: { tenantId: string; sessionId: string }, text: string) => {
    const job = await h.input(session, text);
    await h.queue.enqueue(job);
    await eventually(async () => ['committed', 'failed'].includes((await h.deps.readModels.execution(job.tenantId, job.executionId))?.status ?? ''), 'ended');
    const ended = await h.deps.readModels.execution(job.tenantId, job.executionId);
    expect({ status: ended?.status, error: ended?.error }).toEqual({ status: 'committed', error: null });
    return job;
  };
  const long = (i: number) => `Turn ${i}: ${'I walk down the long corridor and look at every carved stone. '.repeat(30)}`;

  it('the barrier agent is the first agent without a history window; a window never makes one', () => {
    expect(barrierRuntime(h.deps.catalog, {})?.runtimeId).toBe('critic');
    expect(barrierRuntime(h.deps.catalog, { activation: { kind: 'manual', pluginId: 'windowed', runtimeId: 'windowed', payload: null } })).toBeNull();
    expect(compactionWindows(h.deps.providers)).toEqual({ effective: 3584, fastInput: 3584, threshold: 2688 });
  });

  it('compacts once per turn across the stage, before its runtimes read; they see the envelope and fewer messages; audit and replay stay exact', async () => {
    const session = await h.session();
    const jobs = [];
    const runsBefore = calls.runs;
    for (let i = 1; i <= 12; i++) jobs.push(await turn(session, long(i)));
    const events = await h.events(session.sessionId);

    const compactions = of(events, 'history.compacted@1');
    expect(compactions.length).toBeGreaterThanOrEqual(2);
    const passed = of(events, 'compaction.barrier-passed@1');
    // one barrier per turn at most, for the first shared-history agent, never for the windowed runtime
    expect(new Set(passed.map((p) => p.executionId)).size).toBe(passed.length);
    expect(passed.every((p) => p.runtimeId === 'critic' && p.outcome === 'compacted')).toBe(true);
    expect(calls.runs - runsBefore).toBe(passed.length);
    // a merge once two segments were saved: at most two saved now
    expect((await h.deps.readModels.summaries(session.tenantId, session.sessionId)).length).toBeLessThanOrEqual(2);

    const first = jobs.findIndex((j) => passed[0].executionId === j.executionId);
    expect(first).toBeGreaterThan(0);
    const job = jobs[first];
    const types = events.map((e) => `${e.type}${e.type === 'llm.calling@1' ? `:${e.data.runtimeId}` : ''}`);
    const at = (type: string, executionId: string) =>
      events.findIndex((e) => `${e.type}${e.type === 'llm.calling@1' ? `:${e.data.runtimeId}` : ''}` === type && (e.data as Data).executionId === executionId);
    // the windowed runtime's stage ran before the barrier; both shared-history runtimes after the compaction
    expect(at('llm.calling@1:windowed', job.executionId)).toBeLessThan(at('compaction.barrier-passed@1', job.executionId));
    expect(at('compaction.summary-requested@1', job.executionId)).toBeLessThan(at('compaction.summary-responded@1', job.executionId));
    const compactedAt = events.findIndex((e) => e.type === 'history.compacted@1' && e.data.compactionId === passed[0].compactionId);
    expect(compactedAt + 1).toBe(at('compaction.barrier-passed@1', job.executionId)); // one append
    expect(at('llm.calling@1:critic', job.executionId)).toBeGreaterThan(compactedAt);
    expect(at('llm.calling@1:teller', job.executionId)).toBeGreaterThan(compactedAt);
    expect(types.length).toBe(events.length);

    const tellerOf = (executionId: string) => of(events, 'llm.calling@1', executionId).find((c) => c.runtimeId === 'teller')!;
    const before = tellerOf(jobs[first - 1].executionId);
    const after = tellerOf(job.executionId);
    expect(after.body as string).toContain('<compacted_history>');
    expect(before.body as string).not.toContain('<compacted_history>');
    expect(historyCount(after)).toBeLessThan(historyCount(before));
    expect(historyCount(after)).toBe(4);
    // the windowed runtime's request never has the envelope (a window merges no summaries)
    for (const c of of(events, 'llm.calling@1').filter((c) => c.runtimeId === 'windowed')) expect(c.body as string).not.toContain('<compacted_history>');

    // the summary call is recorded: the provider's request and the wire body, then the reply
    const [requested] = of(events, 'compaction.summary-requested@1', job.executionId);
    expect(requested).toMatchObject({ pluginId: 'compactor', slot: 'fast', model: 'gpt-4.1-nano', request: { maxOutputTokens: 120 } });
    expect(JSON.parse(requested.body as string)).toMatchObject({ model: 'gpt-4.1-nano', messages: [{ role: 'system' }, { role: 'user' }] });
    expect(of(events, 'compaction.summary-responded@1', job.executionId)).toEqual([
      expect.objectContaining({ requestId: requested.requestId, finishReason: 'stop', text: expect.stringContaining('rooms of the old keep') }),
    ]);

    // the audit re-derives every request of every turn byte for byte, the summary calls included
    for (const j of jobs) {
      const audit = await auditTurn({ ...h.deps, historyReadLimit: historyReadLimit(h.deps) }, session.sessionId, j.turnId);
      expect(audit.identical).toBe(true);
    }
    const rebuilt = await rebuildRequests(events, h.deps.catalog, h.deps.providers, h.deps.worlds, { historyReadLimit: historyReadLimit(h.deps) });
    expect(rebuilt.filter((c) => c.purpose === 'compaction-summary').length).toBe(passed.length);

    // replay: the fold of the log and the projections rebuilt from it hold the same rows
    const fold = new HistoryFold();
    for (const e of events) fold.apply(e);
    const read = await loadRuntimeHistory(h.deps.readModels, session.tenantId, session.sessionId, historyReadLimit(h.deps));
    expect(fold.uncompacted(session.sessionId, 100)).toEqual(read.messages);
    expect(fold.savedSummaries()).toEqual(read.summaries);
    expect(read.stats).toEqual({ total: 24, compacted: 24 - read.messages.length, uncompacted: read.messages.length, turns: 12 });
    const rows = await dumpProjections(h.database.db);
    expect((await rebuildInline({ db: h.database.db, projections: engineInlineProjections })).failures).toEqual([]);
    expect(await dumpProjections(h.database.db)).toEqual(rows);

    // the shared view past its safety bound fails clearly (nothing is cut silently), in the worker and the rebuild alike
    await expect(loadRuntimeHistory(h.deps.readModels, session.tenantId, session.sessionId, 1)).rejects.toBeInstanceOf(HistoryTooLongError);
    expect(() => fold.uncompacted(session.sessionId, 1)).toThrow(HistoryTooLongError);
  });

  it('a barrier job tried again reuses the recorded summary reply: the model is not called again', async () => {
    const session = await h.session();
    for (let i = 1; i <= 4; i++) await turn(session, long(i));
    const requestsBefore = h.emulator.requests.length;
    behaviour.mode = 'fail-once-after-call';
    const repliesBefore = calls.summaryReplies.length;
    const job = await turn(session, long(5));
    const events = await h.events(session.sessionId);
    expect(of(events, 'compaction.barrier-passed@1', job.executionId)).toEqual([expect.objectContaining({ outcome: 'compacted' })]);
    // the provider ran twice and got the same reply twice, from one model call
    expect(calls.summaryReplies.length - repliesBefore).toBe(2);
    expect(of(events, 'compaction.summary-requested@1', job.executionId)).toHaveLength(1);
    expect(of(events, 'compaction.summary-responded@1', job.executionId)).toHaveLength(1);
    const summaryCalls = h.emulator.requests.slice(requestsBefore).filter((r) => JSON.stringify(r).includes('Summarize the story so far'));
    expect(summaryCalls).toHaveLength(1);
    expect((await auditTurn({ ...h.deps, historyReadLimit: historyReadLimit(h.deps) }, session.sessionId, job.turnId)).identical).toBe(true);
  });

  it('a result the validation refuses changes nothing: the barrier ends as rejected and the turn goes on', async () => {
    const session = await h.session();
    for (let i = 1; i <= 4; i++) await turn(session, long(i));
    behaviour.mode = 'foreign';
    const job = await turn(session, long(5));
    const events = await h.events(session.sessionId);
    expect(of(events, 'compaction.barrier-passed@1', job.executionId)).toEqual([
      expect.objectContaining({ outcome: 'rejected', detail: expect.stringContaining('skipped-message') }),
    ]);
    expect(of(events, 'history.compacted@1')).toEqual([]);
    expect(h.warnings.some((w) => w.includes('compaction rejected'))).toBe(true);
  });

  it('a provider that throws fails the compaction alone: the barrier ends as failed, nothing is marked, the turn commits and the next turn compacts', async () => {
    const session = await h.session();
    for (let i = 1; i <= 4; i++) await turn(session, long(i));
    behaviour.mode = 'throws';
    const job = await turn(session, long(5));
    const events = await h.events(session.sessionId);
    expect(of(events, 'compaction.barrier-passed@1', job.executionId)).toEqual([
      expect.objectContaining({ outcome: 'failed', detail: expect.stringContaining('the compactor broke on 🧑‍🚀 خريطة 地図') }),
    ]);
    expect(of(events, 'history.compacted@1')).toEqual([]);
    behaviour.mode = 'ok';
    const next = await turn(session, long(6));
    expect(of(await h.events(session.sessionId), 'compaction.barrier-passed@1', next.executionId)).toEqual([expect.objectContaining({ outcome: 'compacted' })]);
  });
});
