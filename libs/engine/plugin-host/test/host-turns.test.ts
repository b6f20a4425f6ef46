import { join } from 'node:path';
import type { StoredEvent } from '../../../events';
import { behaviour, calls } from '../../../../test/fixtures/host-plugins/status/server';
import { claimExecution } from '../../turn/claim';
import { historyReadLimit } from '../../execution/deps';
import { runRuntimeStep } from '../../turn/runtime-step';
import { loadSessionJournal } from '../../session/session-reads';
import { TurnRunner } from '../../turn/turn-runner';
import { eventually, type TurnHarness, turnHarness } from '../../turn/test/harness';
import { rebuildRequests } from '../../audit/request-rebuild';
import type { TurnJob } from '../../queue';

const HOST_PLUGINS = join(__dirname, '..', '..', '..', '..', 'test', 'fixtures', 'host-plugins');
const TIMEOUT_MS = 300;

type Data = Record<string, unknown>;
const of = (events: StoredEvent[], type: string) => events.filter((e) => e.type === type).map((e) => e.data as Data);

describe('plugin server entries in real turns (status plugin: a prompt.segment@1 turn segment and a PostContextAssembly hook)', () => {
  let h: TurnHarness;
  beforeAll(async () => {
    h = await turnHarness({ pluginsDir: HOST_PLUGINS, handlerTimeoutMs: TIMEOUT_MS, handlers: (deps) => new TurnRunner(deps) });
  });
  afterAll(() => h.close());
  beforeEach(() => {
    behaviour.mode = 'ok';
    behaviour.onlyFor = null;
  });

  const status = async (job: TurnJob) => (await h.deps.readModels.execution(job.tenantId, job.executionId))?.status;
  const ended = (job: TurnJob) => eventually(async () => ['committed', 'failed'].includes((await status(job)) ?? ''), 'the execution ended');
  const rebuild = async (sessionId: string) =>
    rebuildRequests(await h.events(sessionId), h.deps.catalog, h.deps.providers, h.deps.worlds, { historyReadLimit: historyReadLimit(h.deps) });

  it("the segment is in each runtime's turn context with the host's providerPluginId; one handler call serves both runtimes; the rebuild runs no handler", async () => {
    const session = await h.session();
    const job = await h.input(session, 'Light the lantern');
    const before = { ...calls };
    await h.queue.enqueue(job);
    await ended(job);
    expect(await status(job)).toBe('committed');
    const events = await h.events(session.sessionId);

    // two runtimes (scene in pre-turn, narrator in narrative), one handler call, one recorded result
    expect(calls.segment - before.segment).toBe(1);
    const resolved = of(events, 'extension.resolved@1');
    expect(resolved.filter((r) => r.point === 'prompt.segment@1')).toEqual([
      expect.objectContaining({ executionId: job.executionId, turnId: job.turnId, attempt: 1, pluginId: 'status', extensionId: 'status' }),
    ]);
    // the hook sees a different context per runtime: one call and one result each
    expect(calls.hook - before.hook).toBe(2);
    expect(resolved.filter((r) => r.point === 'PostContextAssembly').map((r) => r.extensionId)).toEqual(['PostContextAssembly#0', 'PostContextAssembly#0']);
    // every result is recorded before the call that used it
    const types = events.map((e) => e.type);
    expect(types.indexOf('extension.resolved@1')).toBeLessThan(types.indexOf('llm.calling@1'));

    for (const call of of(events, 'llm.calling@1')) {
      const body = JSON.parse(call.body as string) as { messages: { role: string; content: string }[] };
      const sections = (call.layout as { messageSections: string[] }).messageSections;
      const turnContext = body.messages[sections.indexOf('turn-context')];
      expect(turnContext.content).toContain('Lantern: lit. Player said: Light the lantern. Turn 1 (en). Stored: null');
      expect(body.messages[0].content).toContain(`[checked by status for ${call.runtimeId as string}]`);
    }

    const counted = { ...calls };
    const rebuilt = await rebuild(session.sessionId);
    expect(rebuilt.map((c) => [c.runtimeId, c.identical])).toEqual([
      ['scene', true],
      ['narrator', true],
    ]);
    expect(calls).toEqual(counted);
    expect(rebuilt[0].sources.find((s) => s.section === 'turn-context')?.items).toEqual(['status/current-status']);
  });

  it('a retried attempt reuses the results its execution recorded: the handler is not called again', async () => {
    const job = await h.input(await h.session(), 'again');
    const claim = async () => {
      const journal = await loadSessionJournal(h.deps, job);
      return (await claimExecution(h.deps, job, journal, journal.get(job.executionId)!))!;
    };
    const first = await claim();
    const before = calls.segment;
    expect(await runRuntimeStep(h.deps, { ...job, attempt: first, pluginId: 'scene', runtimeId: 'scene' })).toBe('produced');
    expect(calls.segment).toBe(before + 1);
    const second = await claim();
    expect(second).toBe(first + 1);
    expect(await runRuntimeStep(h.deps, { ...job, attempt: second, pluginId: 'narrator', runtimeId: 'narrator' })).toBe('produced');
    expect(calls.segment).toBe(before + 1);
    expect(of(await h.events(job.sessionId), 'extension.resolved@1').filter((r) => r.point === 'prompt.segment@1')).toHaveLength(1);
    expect((await rebuild(job.sessionId)).every((c) => c.identical)).toBe(true);
  });

  it('two copies of one runtime job at once, the handler answering differently: the first result is kept, the other copy sends nothing; a retry reuses it', async () => {
    const job = await h.input(await h.session(), 'twice');
    const journal = await loadSessionJournal(h.deps, job);
    const attempt = (await claimExecution(h.deps, job, journal, journal.get(job.executionId)!))!;
    Object.assign(behaviour, { mode: 'varying' });
    const scene = { ...job, attempt, pluginId: 'scene', runtimeId: 'scene' };
    const before = calls.segment;
    const results = await Promise.allSettled([runRuntimeStep(h.deps, scene), runRuntimeStep(h.deps, scene)]);
    expect(calls.segment).toBe(before + 2);
    expect(results.map((r) => r.status).sort()).toEqual(['fulfilled', 'rejected']);
    expect(results.find((r) => r.status === 'rejected')).toMatchObject({ reason: { code: 'EXTENSION_RESULT_RACE', category: 'conflict' } });
    // the retried copy finds the output and the result on record: no handler call, no second request
    expect(await runRuntimeStep(h.deps, scene)).toBe('reused');
    expect(await runRuntimeStep(h.deps, { ...scene, pluginId: 'narrator', runtimeId: 'narrator' })).toBe('produced');
    expect(calls.segment).toBe(before + 2);
    const events = await h.events(job.sessionId);
    expect(of(events, 'extension.resolved@1').filter((r) => r.point === 'prompt.segment@1')).toHaveLength(1);
    expect(of(events, 'llm.calling@1')).toHaveLength(2);
    expect((await rebuild(job.sessionId)).every((c) => c.identical)).toBe(true);
  });

  it.each([
    ['throw', 'PLUGIN_HANDLER_THREW', 'threw: the lantern went out'],
    ['hang', 'PLUGIN_HANDLER_TIMEOUT', `did not answer within ${TIMEOUT_MS} ms`],
    ['bad', 'PLUGIN_RESULT_INVALID', 'returned an invalid result'],
    ['claim', 'PLUGIN_RESULT_INVALID', 'providerPluginId is set by the host'],
  ] as const)('a handler that does "%s" fails only that execution, naming plugin, point and id; the next input works', async (mode, code, detail) => {
    const session = await h.session();
    const failing = await h.input(session, 'break it');
    const next = await h.input(session, 'carry on');
    Object.assign(behaviour, { mode, onlyFor: 'break it' });
    await h.queue.enqueue(failing);
    await ended(failing);
    await ended(next);
    expect(await status(failing)).toBe('failed');
    expect(await status(next)).toBe('committed');
    const events = await h.events(session.sessionId);
    const [failure] = of(events, 'execution.failed@1');
    expect(failure).toMatchObject({ executionId: failing.executionId, error: { code } });
    const message = (failure.error as { message: string }).message;
    expect(message).toContain('plugin status: prompt.segment@1 "status"');
    expect(message).toContain(detail);
    // the failed execution called no model and recorded no result
    expect(of(events, 'llm.calling@1').map((c) => c.executionId)).not.toContain(failing.executionId);
    expect(of(events, 'extension.resolved@1').map((c) => c.executionId)).not.toContain(failing.executionId);
    expect((await rebuild(session.sessionId)).every((c) => c.identical)).toBe(true);
  });
});
