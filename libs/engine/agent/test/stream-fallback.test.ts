import { join } from 'node:path';
import type { Reply, ScriptedCall } from '../../../emulator';
import type { EventData, StoredEvent } from '../../../events';
import type { ToolDefinition } from '../../../providers';
import type { ToolOutcome, ToolSet } from '../../tools';
import { auditTurn } from '../../audit/turn-audit';
import { claimExecution } from '../../turn/claim';
import { historyReadLimit } from '../../execution/deps';
import { runRuntimeStep } from '../../turn/runtime-step';
import { loadSessionJournal } from '../../session/session-reads';
import { TurnRunner } from '../../turn/turn-runner';
import { playToEnd, type TurnHarness, turnHarness } from '../../turn/test/harness';

/** teller: a story runtime that looks one thing up, then tells its story; ledger: a runtime without story text that only calls runtime-done. */
const DEFINITIONS: ToolDefinition[] = [
  { name: 'lookup', description: 'Looks a thing up.', parameters: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] } },
  { name: 'runtime-done', description: 'Ends the runtime.', parameters: { type: 'object', properties: {} } },
];
let executed: string[] = [];
const tools: ToolSet = {
  definitions: (runtime) => DEFINITIONS.filter((d) => runtime.manifest.agent?.tools.includes(d.name)),
  async execute(call): Promise<ToolOutcome> {
    executed.push(call.name);
    if (call.name === 'runtime-done') return { content: '{"ok":true}', ok: true, changes: [], emissions: [], done: true };
    return { content: JSON.stringify({ found: call.arguments.q }), ok: true, changes: [], emissions: [] };
  },
};
function script(call: ScriptedCall): Reply | undefined {
  const system = call.transcript[0]?.content ?? '';
  if (system.includes('runtime ledger/ledger')) return { kind: 'tool', name: 'runtime-done', args: {} };
  if (!system.includes('runtime teller/teller')) return undefined;
  if (call.toolResults === 0) return { kind: 'tool', name: 'lookup', args: { q: 'gate' } };
  return { kind: 'text', text: 'The gate opens onto the salt road, and the caravan walks on into the dusk.' };
}

type Calling = EventData<'llm.calling@1'>;
const callings = (events: StoredEvent[], pluginId: string): Calling[] =>
  events.flatMap((e) => (e.type === 'llm.calling@1' && e.data.pluginId === pluginId ? [e.data] : []));
const wire = (c: Calling) => JSON.parse(c.body) as Record<string, unknown>;
/** A body without its streaming fields: what the fallback sends. */
const unstreamed = (c: Calling) => {
  const { stream: _s, stream_options: _o, ...rest } = wire(c);
  return rest;
};

describe('streaming for story runtimes with a non-streaming fallback', () => {
  let h: TurnHarness;
  beforeAll(async () => {
    h = await turnHarness({ pluginsDir: join(__dirname, 'fixtures-stream'), script, tools, handlers: (deps) => new TurnRunner(deps) });
  });
  afterAll(() => h.close());
  beforeEach(() => {
    executed = [];
    h.emulator.setStreamingFault(null);
  });

  const audit = (sessionId: string, turnId: string) => auditTurn({ ...h.deps, historyReadLimit: historyReadLimit(h.deps), tools }, sessionId, turnId);
  const turn = () => playToEnd(h);
  const committedStory = (events: StoredEvent[]) =>
    events.flatMap((e) => (e.type === 'turn.committed@1' ? e.data.messages.filter((m) => m.role === 'assistant').map((m) => [m.runtimeId, m.text]) : []));

  it('without a fault: the story runtime streams each step, the other runtime never streams; no fallback', async () => {
    const { job, events } = await turn();
    const teller = callings(events, 'teller');
    expect(teller.map((c) => [c.step, wire(c).stream, c.fallback])).toEqual([
      [1, true, undefined],
      [2, true, undefined],
    ]);
    const ledger = callings(events, 'ledger');
    expect(ledger.length).toBeGreaterThan(0);
    for (const c of ledger) expect([c.fallback, 'stream' in wire(c)]).toEqual([undefined, false]);
    expect(committedStory(events)).toEqual([['teller', 'The gate opens onto the salt road, and the caravan walks on into the dusk.']]);
    expect((await audit(job.sessionId, job.turnId)).identical).toBe(true);
  });

  it.each<[string, Parameters<TurnHarness['emulator']['setStreamingFault']>[0]]>([
    ['refuses streaming (a 400 naming stream)', { kind: 'refuse' }],
    ['breaks the stream before any text', { kind: 'break' }],
  ])(
    'a provider that %s: each streamed step is sent once more without streaming, recorded first as its own llm.calling; the story commits; the audit rebuilds every call byte for byte',
    async (_name, fault) => {
      h.emulator.setStreamingFault(fault);
      const from = h.emulator.requests.length;
      const { job, events } = await turn();
      expect(events.some((e) => e.type === 'execution.failed@1')).toBe(false);
      const teller = callings(events, 'teller');
      // per step: the streamed call, then its fallback (same step, same request without streaming)
      expect(teller.map((c) => [c.step, wire(c).stream ?? false, c.fallback])).toEqual([
        [1, true, undefined],
        [1, false, 'non-streaming'],
        [2, true, undefined],
        [2, false, 'non-streaming'],
      ]);
      expect(unstreamed(teller[1])).toEqual(wire(teller[1]));
      expect(unstreamed(teller[0])).toEqual(wire(teller[1]));
      expect(unstreamed(teller[2])).toEqual(wire(teller[3]));
      // each fallback is recorded before it is sent, each step answered once (by the fallback's call)
      const tellerEvents = events.filter((e) => (e.type === 'llm.calling@1' || e.type === 'llm.responded@1') && e.data.pluginId === 'teller');
      expect(tellerEvents.map((e) => [e.type, (e.data as { callId: string }).callId])).toEqual([
        ['llm.calling@1', teller[0].callId],
        ['llm.calling@1', teller[1].callId],
        ['llm.responded@1', teller[1].callId],
        ['llm.calling@1', teller[2].callId],
        ['llm.calling@1', teller[3].callId],
        ['llm.responded@1', teller[3].callId],
      ]);
      expect(executed.filter((n) => n === 'lookup')).toHaveLength(1);
      // the runtime without story text never streams: the fault never meets it
      for (const c of callings(events, 'ledger')) expect([c.fallback, 'stream' in wire(c)]).toEqual([undefined, false]);
      const sent = h.emulator.requests.slice(from).map((r) => r.body as { stream?: boolean; messages: { content: unknown }[] });
      expect(sent.filter((b) => b.stream === true)).toHaveLength(2);
      expect(committedStory(events)).toEqual([['teller', 'The gate opens onto the salt road, and the caravan walks on into the dusk.']]);
      const audited = await audit(job.sessionId, job.turnId);
      expect(audited.calls.map((c) => [c.runtimeId, c.identical])).toEqual([
        ['teller', true],
        ['teller', true],
        ['teller', true],
        ['teller', true],
        ['ledger', true],
      ]);
      expect(audited.identical).toBe(true);
    },
  );

  it('a stream that breaks after text arrived is not a streaming problem: no fallback, the job is tried again (streamed)', async () => {
    // the tool step's stream is 4 events long (answered whole); the story step's breaks after its first words
    h.emulator.setStreamingFault({ kind: 'break', afterEvents: 4, times: 1 });
    const { job, events } = await turn();
    const teller = callings(events, 'teller');
    expect(teller.map((c) => [c.step, c.attempt, wire(c).stream, c.fallback])).toEqual([
      [1, 1, true, undefined],
      [2, 1, true, undefined],
      [2, 1, true, undefined], // the runtime job tried again (a retryable failure)
    ]);
    expect(committedStory(events)).toEqual([['teller', 'The gate opens onto the salt road, and the caravan walks on into the dusk.']]);
    expect((await audit(job.sessionId, job.turnId)).identical).toBe(true);
  });

  it('resume: a worker killed after a fallback step; the next attempt sends no recorded call again, and its own streamed step falls back too', async () => {
    h.emulator.setStreamingFault({ kind: 'refuse' });
    const session = await h.session();
    const input = await h.input(session, 'Walk to the gate');
    const claim = async () => {
      const journal = await loadSessionJournal(h.deps, input);
      return { ...input, attempt: (await claimExecution(h.deps, input, journal, journal.get(input.executionId)!))! };
    };
    const from = h.emulator.requests.length;
    // the crash: the append of the second step's first llm.calling never happens
    // a run's appends catch up under the stream's lock (ExecutionRun: appendCatchingUp)
    const append = h.deps.store.appendCatchingUp.bind(h.deps.store);
    const spy = jest.spyOn(h.deps.store, 'appendCatchingUp').mockImplementation(async (args) => {
      if (args.events.some((e) => e.type === 'llm.calling@1' && e.data.step === 2)) throw new Error('killed');
      return append(args);
    });
    const first = await claim();
    await expect(runRuntimeStep(h.deps, { ...first, pluginId: 'teller', runtimeId: 'teller' })).rejects.toThrow('killed');
    spy.mockRestore();
    expect(h.emulator.requests.length - from).toBe(2); // step 1 streamed (refused), then its fallback
    const retried = await claim();
    expect(retried.attempt).toBe(2);
    expect(await runRuntimeStep(h.deps, { ...retried, pluginId: 'teller', runtimeId: 'teller' })).toBe('produced');
    // step 1 (answered by its fallback) is not sent again, its tool call not executed again
    expect(h.emulator.requests.length - from).toBe(4);
    expect(executed).toEqual(['lookup']);
    const events = await h.events(input.sessionId);
    expect(callings(events, 'teller').map((c) => [c.step, c.attempt, c.fallback])).toEqual([
      [1, 1, undefined],
      [1, 1, 'non-streaming'],
      [2, 2, undefined],
      [2, 2, 'non-streaming'],
    ]);
    const audited = await audit(input.sessionId, input.turnId);
    expect(audited.calls.map((c) => c.identical)).toEqual([true, true, true, true]);
  });
});
