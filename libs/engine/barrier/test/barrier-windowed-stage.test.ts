import type { Reply, ScriptedCall } from '../../../emulator';
import type { StoredEvent } from '../../../events';
import { behaviour } from '../../../../test/fixtures/compaction-plugins/compactor/server';
import { glance } from '../../../../test/fixtures/compaction-plugins/glancer/server';
import { auditTurn } from '../../audit/turn-audit';
import { historyReadLimit } from '../../execution/deps';
import { eventually, type TurnHarness } from '../../turn/test/harness';
import { compactionHarness, historyCount } from './compaction-fixtures';
import { playTurn } from './long-session';

function script(call: ScriptedCall): Reply | undefined {
  if (!(call.transcript[0]?.content ?? '').startsWith('Summarize the story so far')) return undefined;
  return { kind: 'text', text: 'The wanderer crossed the old keep.' };
}

function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

/** Resolves with `promise`, or rejects naming `what` after `ms` (a hang guard that fails the test). */
async function within(promise: Promise<void>, what: string, ms = 10_000): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`not within ${ms} ms: ${what}`)), ms)));
  try {
    await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

type Data = Record<string, unknown>;
const label = (e: StoredEvent) => `${e.type}${e.type === 'llm.calling@1' ? `:${e.data.runtimeId}` : ''}`;

jest.setTimeout(60_000);

/**
 * Spec §1 step 5: "A runtime that declares a history window does not trigger this barrier and does
 * not wait for it." The glancer (`maxTurns: 3`, `includeSummaries: true`) shares the narrative stage
 * with the barrier's agent (critic) and the teller; the compactor keeps the last four messages.
 */
describe('a windowed agent in the stage of the compaction barrier (real turns)', () => {
  let h: TurnHarness;
  beforeAll(async () => {
    h = await compactionHarness({ keep: (p) => p.manifest.id !== 'windowed', script });
  });
  afterAll(() => h.close());
  afterEach(() => {
    Object.assign(behaviour, { mode: 'ok', hold: null, started: null });
    Object.assign(glance, { hold: null, entered: null });
  });

  const long = (i: number) => `Turn ${i}: ${'I walk down the long corridor and look at every carved stone. '.repeat(30)}`;
  const ended = async (job: { tenantId: string; executionId: string }) => {
    await eventually(async () => ['committed', 'failed'].includes((await h.deps.readModels.execution(job.tenantId, job.executionId))?.status ?? ''), 'ended');
    const execution = await h.deps.readModels.execution(job.tenantId, job.executionId);
    expect({ status: execution?.status, error: execution?.error }).toEqual({ status: 'committed', error: null });
  };
  /** A session of four long turns: the fifth turn's barrier compacts. */
  const longSession = async () => {
    const session = await h.session();
    const turns = [];
    for (let i = 1; i <= 4; i++) turns.push(await playTurn(h, session, long(i)));
    return { session, turns };
  };
  const audited = async (sessionId: string, turnIds: string[]) =>
    Promise.all(turnIds.map(async (t) => (await auditTurn({ ...h.deps, historyReadLimit: historyReadLimit(h.deps) }, sessionId, t)).identical));

  it('runs while the barrier compacts: its model call comes before the compaction, the shared-history agents after it; audit exact', async () => {
    const { session, turns } = await longSession();
    const barrierStarted = deferred();
    const release = deferred();
    Object.assign(behaviour, { hold: release.promise, started: barrierStarted.resolve });
    const job = await h.input(session, long(5));
    await h.queue.enqueue(job);
    const glancerCalled = async () =>
      (await h.events(session.sessionId)).some((e) => e.type === 'llm.calling@1' && e.data.executionId === job.executionId && e.data.runtimeId === 'glancer');
    try {
      await within(barrierStarted.promise, 'the barrier of turn 5 started');
      // the compactor holds: a glancer that waited for the barrier would never call its model now
      await eventually(glancerCalled, "the glancer's model call while the barrier holds", 10_000);
    } finally {
      release.resolve();
    }
    await ended(job);

    const events = await h.events(session.sessionId);
    const at = (what: string) => events.findIndex((e) => label(e) === what && (e.data as Data).executionId === job.executionId);
    const compacted = events.findIndex((e, i) => e.type === 'history.compacted@1' && i > at('player-input.submitted@1'));
    expect(events[compacted + 1]).toMatchObject({ type: 'compaction.barrier-passed@1', data: { executionId: job.executionId, outcome: 'compacted' } });
    expect(at('llm.calling@1:glancer')).toBeLessThan(compacted);
    expect(at('llm.calling@1:critic')).toBeGreaterThan(compacted);
    expect(at('llm.calling@1:teller')).toBeGreaterThan(compacted);
    // the glancer read its three turns before the compaction marked two of them (six messages, not four)
    const glancer = events[at('llm.calling@1:glancer')].data as Data;
    expect(historyCount(glancer)).toBe(6);
    expect(await audited(session.sessionId, [...turns.map((t) => t.turnId), job.turnId])).toEqual([true, true, true, true, true]);
  });

  it('a barrier tried again after the windowed agent ran still runs: a runtime that does not wait does not count as its stage started', async () => {
    const { session, turns } = await longSession();
    const barrierStarted = deferred();
    const release = deferred();
    // the first run calls the summary model, then fails as if it went away: the turn job is tried again
    Object.assign(behaviour, { mode: 'fail-once-after-call', hold: release.promise, started: barrierStarted.resolve });
    const job = await h.input(session, long(5));
    await h.queue.enqueue(job);
    const glancerDone = async () =>
      (await h.events(session.sessionId)).some(
        (e) => e.type === 'runtime.output.produced@1' && e.data.executionId === job.executionId && e.data.runtimeId === 'glancer',
      );
    try {
      await within(barrierStarted.promise, 'the barrier of turn 5 started');
      await eventually(glancerDone, "the glancer's output while the barrier holds", 10_000);
    } finally {
      behaviour.hold = null;
      release.resolve();
    }
    await ended(job);
    const events = await h.events(session.sessionId);
    const of = (type: string) => events.filter((e) => e.type === type && (e.data as Data).executionId === job.executionId).map((e) => e.data as Data);
    expect(of('compaction.barrier-passed@1')).toEqual([expect.objectContaining({ outcome: 'compacted', runtimeId: 'critic' })]);
    expect(of('compaction.summary-requested@1')).toHaveLength(1);
    expect(of('llm.calling@1').filter((c) => c.runtimeId === 'glancer')).toHaveLength(1);
    expect(await audited(session.sessionId, [...turns.map((t) => t.turnId), job.turnId])).toEqual([true, true, true, true, true]);
  });

  it('a compaction that lands after it read its history sends its job round again: the call it records reads the compacted history; audit exact', async () => {
    const { session, turns } = await longSession();
    const glancerIn = deferred();
    const glancerGo = deferred();
    Object.assign(glance, { hold: glancerGo.promise, entered: glancerIn.resolve });
    const compactorGo = deferred();
    Object.assign(behaviour, { hold: compactorGo.promise });
    const job = await h.input(session, long(5));
    await h.queue.enqueue(job);
    const passed = async () =>
      (await h.events(session.sessionId)).some((e) => e.type === 'compaction.barrier-passed@1' && e.data.executionId === job.executionId);
    try {
      // the glancer has read the history (six messages of its window uncompacted) and waits before its call
      await within(glancerIn.promise, 'the glancer built its request');
      compactorGo.resolve();
      await eventually(passed, 'the barrier passed');
    } finally {
      compactorGo.resolve();
      glance.hold = null;
      glancerGo.resolve();
    }
    await ended(job);

    const events = await h.events(session.sessionId);
    const compacted = events.map((e) => e.type).lastIndexOf('history.compacted@1');
    expect(events[compacted + 1]).toMatchObject({ type: 'compaction.barrier-passed@1', data: { executionId: job.executionId, outcome: 'compacted' } });
    const glancerCalls = events.flatMap((e, i) =>
      e.type === 'llm.calling@1' && e.data.executionId === job.executionId && e.data.runtimeId === 'glancer' ? [{ i, data: e.data as Data }] : [],
    );
    // one call, recorded after the compaction, from the history read again: its window cut to four messages, the summary merged
    expect(glancerCalls).toHaveLength(1);
    expect(glancerCalls[0].i).toBeGreaterThan(compacted);
    expect(historyCount(glancerCalls[0].data)).toBe(4);
    expect(glancerCalls[0].data.body as string).toContain('The wanderer crossed the old keep.');
    expect(await audited(session.sessionId, [...turns.map((t) => t.turnId), job.turnId])).toEqual([true, true, true, true, true]);
  });
});
