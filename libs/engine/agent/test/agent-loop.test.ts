import { join } from 'node:path';
import type { Reply, ScriptedCall } from '../../../emulator';
import type { StoredEvent } from '../../../events';
import { OpenAIChatAdapter, type ToolCall, type ToolDefinition } from '../../../providers';
import { rebuildRequests } from '../../audit/request-rebuild';
import type { TurnJob } from '../../queue';
import type { ToolOutcome, ToolSet } from '../../tools';
import { auditTurn } from '../../audit/turn-audit';
import { claimExecution } from '../../turn/claim';
import { historyReadLimit } from '../../execution/deps';
import { runRuntimeStep } from '../../turn/runtime-step';
import { loadSessionJournal } from '../../session/session-reads';
import { type TurnHarness, turnHarness } from '../../turn/test/harness';
import { AgentLoopError } from '../errors';

const FIXTURES = join(__dirname, 'fixtures');

/** Scripted replies per runtime (`keeper`, `strict`, ...), used up in order; an exhausted queue answers "fallback text". */
const queues = new Map<string, Reply[]>();
function script(call: ScriptedCall): Reply | undefined {
  const system = call.transcript[0]?.content ?? '';
  const runtime = /(?:You are the runtime|中的运行时) ([a-z-]+)\//.exec(system)?.[1] ?? ''; // the preamble in English, or in Chinese (zh-Hans)
  return queues.get(runtime)?.shift() ?? { kind: 'text', text: 'fallback text' };
}
const tool = (name: string, args: unknown): Reply => ({ kind: 'tool', name, args });
const text = (t: string): Reply => ({ kind: 'text', text: t });

/** A minimal ToolSet: `lookup` answers what it was asked, `runtime-done` completes; every execution counted. */
const executed: ToolCall[] = [];
const DEFINITIONS: ToolDefinition[] = [
  { name: 'lookup', description: 'Looks a thing up.', parameters: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] } },
  { name: 'note', description: 'Notes a line in the ledger.', parameters: { type: 'object', properties: { key: { type: 'string' } } } },
  { name: 'runtime-done', description: 'Ends the runtime.', parameters: { type: 'object', properties: {} } },
];
/** The topics each execution of a tool saw as emitted already. */
const seenTopics: string[][] = [];
const testTools: ToolSet = {
  definitions: (runtime) => DEFINITIONS.filter((d) => runtime.manifest.agent?.tools.includes(d.name)),
  async execute(call, ctx): Promise<ToolOutcome> {
    executed.push(call);
    seenTopics.push([...ctx.emittedTopics]);
    if (call.name === 'note')
      return {
        content: '{"noted":true}',
        ok: true,
        changes: [{ namespace: 'ledger', key: String(call.arguments.key), value: { balanced: true } }],
        emissions: [{ topic: 'books.balanced', payload: { key: String(call.arguments.key) } }],
      };
    if (call.name === 'runtime-done') return { content: '{"ok":true}', ok: true, changes: [], emissions: [], done: true };
    if (call.name === 'crash') throw new Error('the ledger caught fire');
    return { content: JSON.stringify({ found: call.arguments.q }), ok: true, changes: [], emissions: [] };
  },
};

describe('the agent loop', () => {
  let h: TurnHarness;
  beforeAll(async () => {
    h = await turnHarness({ pluginsDir: FIXTURES, script, tools: testTools });
  });
  afterAll(() => h.close());
  beforeEach(() => {
    queues.clear();
    executed.length = 0;
    seenTopics.length = 0;
  });

  async function claimed(job?: TurnJob & { turnId: string }): Promise<TurnJob & { turnId: string; attempt: number }> {
    const j = job ?? (await h.input(await h.session()));
    const journal = await loadSessionJournal(h.deps, j);
    return { ...j, attempt: (await claimExecution(h.deps, j, journal, journal.get(j.executionId)!))! };
  }
  const run = (job: TurnJob & { attempt: number }, id: string) => runRuntimeStep(h.deps, { ...job, pluginId: id, runtimeId: id });
  const rebuilt = (events: StoredEvent[]) =>
    rebuildRequests(events, h.deps.catalog, h.deps.providers, h.deps.worlds, { historyReadLimit: historyReadLimit(h.deps), tools: testTools });
  const bodies = (from: number) => h.emulator.requests.slice(from).map((r) => r.body as { messages: { role: string; content: unknown }[]; tools?: unknown[] });
  const of = <T extends StoredEvent['type']>(events: StoredEvent[], type: T) => events.filter((e): e is Extract<StoredEvent, { type: T }> => e.type === type);

  it('two tool rounds then runtime-done: each step and each tool call recorded, results sent back, every step rebuilt byte for byte', async () => {
    queues.set('keeper', [tool('lookup', { q: 'door' }), tool('lookup', { q: 'key' }), tool('runtime-done', {})]);
    const job = await claimed();
    const from = h.emulator.requests.length;
    expect(await run(job, 'keeper')).toBe('produced');
    expect(h.emulator.requests.length - from).toBe(3);
    expect(executed.map((c) => c.name)).toEqual(['lookup', 'lookup', 'runtime-done']);
    const [, second, third] = bodies(from);
    // the tools are declared on every step; the second step carries the first call and its result
    expect(second.tools).toHaveLength(3);
    const roles = second.messages.slice(-2).map((m) => m.role);
    expect(roles).toEqual(['assistant', 'tool']);
    expect(second.messages.at(-1)!.content).toBe('{"found":"door"}');
    expect(third.messages.filter((m) => m.role === 'tool').map((m) => m.content)).toEqual(['{"found":"door"}', '{"found":"key"}']);

    const events = await h.events(job.sessionId);
    expect(of(events, 'llm.calling@1').map((e) => e.data.step)).toEqual([1, 2, 3]);
    expect(of(events, 'llm.responded@1').map((e) => e.data.step)).toEqual([1, 2, 3]);
    expect(of(events, 'tool.called@1').map((e) => [e.data.step, e.data.name, e.data.arguments])).toEqual([
      [1, 'lookup', '{"q":"door"}'],
      [2, 'lookup', '{"q":"key"}'],
      [3, 'runtime-done', '{}'],
    ]);
    expect(of(events, 'tool.completed@1').map((e) => [e.data.step, e.data.ok, e.data.content, e.data.done ?? false])).toEqual([
      [1, true, '{"found":"door"}', false],
      [2, true, '{"found":"key"}', false],
      [3, true, '{"ok":true}', true],
    ]);
    expect(of(events, 'runtime.output.produced@1').map((e) => e.data.text)).toEqual(['']);
    const calls = await rebuilt(events);
    expect(calls.map((c) => c.identical)).toEqual([true, true, true]);
    // the audit too, and without the tools it would not be identical (they are part of the request)
    const audit = await auditTurn({ ...h.deps, historyReadLimit: historyReadLimit(h.deps), tools: testTools }, job.sessionId, job.turnId);
    expect(audit.identical).toBe(true);
    expect(audit.calls).toHaveLength(3);
    expect((await auditTurn({ ...h.deps, historyReadLimit: historyReadLimit(h.deps), tools: undefined }, job.sessionId, job.turnId)).identical).toBe(false);
  });

  it('appends of a tool step (issue 33): the reply goes with the call before the tool runs, a completing outcome with the output; the log reads as before', async () => {
    queues.set('keeper', [tool('lookup', { q: 'door' }), tool('runtime-done', {})]);
    const job = await claimed();
    const before = (await h.events(job.sessionId)).length;
    const appends = jest.spyOn(h.deps.store, 'appendCatchingUp');
    try {
      expect(await run(job, 'keeper')).toBe('produced');
      const appended = await Promise.all(
        appends.mock.results.map(async (r) => ((await r.value) as Awaited<ReturnType<typeof h.deps.store.appendCatchingUp>>).appended),
      );
      expect(appended.map((a) => a?.events.map((e) => e.type))).toEqual([
        ['llm.calling@1'],
        // recorded before the lookup runs: a crash after it finds the call recorded and runs it again
        ['llm.responded@1', 'tool.called@1'],
        // the next request is built from the log with this result in it: recorded before that build
        ['tool.completed@1'],
        ['llm.calling@1'],
        ['llm.responded@1', 'tool.called@1'],
        // runtime-done completes the runtime: its outcome and the output in one append (with the commit, were it the last)
        ['tool.completed@1', 'runtime.output.produced@1'],
      ]);
    } finally {
      appends.mockRestore();
    }
    const events = (await h.events(job.sessionId)).slice(before);
    expect(events.map((e) => e.type)).toEqual([
      'llm.calling@1',
      'llm.responded@1',
      'tool.called@1',
      'tool.completed@1',
      'llm.calling@1',
      'llm.responded@1',
      'tool.called@1',
      'tool.completed@1',
      'runtime.output.produced@1',
    ]);
    expect(executed.map((c) => c.name)).toEqual(['lookup', 'runtime-done']);
    expect((await rebuilt(await h.events(job.sessionId))).map((c) => c.identical)).toEqual([true, true]);
  });

  it("a tool's plugin-data writes and emitted events are appended with its outcome; the next step reads the written data, the rebuild too", async () => {
    queues.set('keeper', [tool('note', { key: 'march' }), tool('lookup', { q: 'march' }), text('Balanced.')]);
    const job = await claimed();
    const from = h.emulator.requests.length;
    expect(await run(job, 'keeper')).toBe('produced');
    const events = await h.events(job.sessionId);
    const completed = events.findIndex((e) => e.type === 'tool.completed@1');
    const group = events.slice(completed, completed + 3);
    expect(group.map((e) => e.type)).toEqual(['tool.completed@1', 'plugin-data.written@1', 'runtime.activated@1']);
    expect(new Set(group.map((e) => e.recordedAt)).size).toBe(1); // one append
    expect(group[0].data).toMatchObject({ emittedTopics: ['books.balanced'] });
    expect(group[1].data).toMatchObject({ pluginId: 'keeper', namespace: 'ledger', key: 'march', value: { balanced: true } });
    expect(group[2].data).toMatchObject({ kind: 'event', pluginId: 'auditor', topic: 'books.balanced', payload: { key: 'march' } });
    // the next tool call sees the topic as emitted in this execution
    expect(seenTopics).toEqual([[], ['books.balanced']]);
    // the second step's request carries the row the first step's tool wrote (selfData read per step)
    expect(JSON.stringify(bodies(from)[1].messages)).toContain('march');
    expect(JSON.stringify(bodies(from)[0].messages)).not.toContain('balanced');
    expect((await rebuilt(events)).map((c) => c.identical)).toEqual([true, true, true]);
  });

  it('a ToolSet that throws (the last guard): the model gets the TOOL_FAILED envelope every tool error has, and the loop goes on', async () => {
    queues.set('keeper', [tool('crash', {}), tool('runtime-done', {})]);
    const job = await claimed();
    const from = h.emulator.requests.length;
    expect(await run(job, 'keeper')).toBe('produced');
    const expected = { ok: false, error: { code: 'TOOL_FAILED', message: 'tool "crash" failed: the ledger caught fire' } };
    expect(JSON.parse(bodies(from)[1].messages.at(-1)!.content as string)).toEqual(expected);
    const completed = of(await h.events(job.sessionId), 'tool.completed@1');
    expect(completed.map((e) => [e.data.name, e.data.ok, e.data.errorCode])).toEqual([
      ['crash', false, 'TOOL_FAILED'],
      ['runtime-done', true, undefined],
    ]);
    expect(JSON.parse(completed[0].data.content)).toEqual(expected);
  });

  it('agent.loop.maxSteps: a loop that does not complete within the limit fails the runtime', async () => {
    queues.set('capped', [tool('lookup', { q: 'a' }), tool('lookup', { q: 'b' }), tool('lookup', { q: 'c' })]);
    const job = await claimed();
    const from = h.emulator.requests.length;
    const error = await run(job, 'capped').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AgentLoopError);
    expect((error as AgentLoopError).code).toBe('AGENT_MAX_STEPS');
    expect(h.emulator.requests.length - from).toBe(2);
    expect(executed).toHaveLength(2);
  });

  it('requireToolUse: a bare text finish gets one corrective nudge, then an honest failure', async () => {
    queues.set('strict', [text('All done.'), text('Still done.')]);
    const job = await claimed();
    const from = h.emulator.requests.length;
    const error = await run(job, 'strict').catch((e: unknown) => e);
    expect((error as AgentLoopError).code).toBe('AGENT_TOOL_USE_REQUIRED');
    const sent = bodies(from);
    expect(sent).toHaveLength(2);
    expect(sent[1].messages.slice(-2)).toEqual([
      { role: 'assistant', content: 'All done.' },
      { role: 'user', content: expect.stringMatching(/^You ended without calling a tool/) },
    ]);
    const events = await h.events(job.sessionId);
    expect((await rebuilt(events)).map((c) => c.identical)).toEqual([true, true]);
  });

  it('requireToolUse: after the nudge a tool call is accepted', async () => {
    queues.set('strict', [text('All done.'), tool('lookup', { q: 'x' }), text('Looked it up.')]);
    const job = await claimed();
    expect(await run(job, 'strict')).toBe('produced');
    const events = await h.events(job.sessionId);
    expect(of(events, 'runtime.output.produced@1').map((e) => e.data.text)).toEqual(['Looked it up.']);
  });

  it('loop detection: the same call repeating gets one nudge, then the runtime stops', async () => {
    queues.set('keeper', [tool('lookup', { q: 'door' }), tool('lookup', { q: 'door' }), tool('lookup', { q: 'door' })]);
    const job = await claimed();
    const from = h.emulator.requests.length;
    const error = await run(job, 'keeper').catch((e: unknown) => e);
    expect((error as AgentLoopError).code).toBe('AGENT_REPEATED_TOOL_CALL');
    const sent = bodies(from);
    expect(sent).toHaveLength(3);
    expect(sent[2].messages.at(-1)).toEqual({ role: 'user', content: expect.stringMatching(/^You called the same tool with the same arguments again/) });
    // the repeat after the nudge is not executed
    expect(executed).toHaveLength(2);
    expect((await rebuilt(await h.events(job.sessionId))).map((c) => c.identical)).toEqual([true, true, true]);
  });

  it('schema gate: prose, then JSON the schema refuses, get [retry N] hints; past the limit the runtime fails keeping the raw output', async () => {
    queues.set('facts', [text('Here are the facts: none.'), text('{"facts": 3}'), text('{"facts": "still wrong"}')]);
    const job = await claimed();
    const from = h.emulator.requests.length;
    const build = jest.spyOn(OpenAIChatAdapter.prototype, 'buildRequest');
    const error = await run(job, 'facts').catch((e: unknown) => e);
    const schemas = build.mock.calls.map(([call]) => call.outputSchema);
    build.mockRestore();
    expect((error as AgentLoopError).code).toBe('AGENT_OUTPUT_INVALID');
    expect((error as Error).message).toContain('raw output: "{\\"facts\\": \\"still wrong\\"}"');
    const sent = bodies(from);
    expect(sent).toHaveLength(3);
    expect(sent[1].messages.at(-1)!.content).toMatch(/^\[retry 1\] Your reply was not JSON/);
    expect(sent[2].messages.at(-1)!.content).toMatch(/^\[retry 2\] Your JSON does not match the output schema: \/facts: must be array/);
    // the output schema reaches every model call (the adapter maps it to its native field) and the JSON rules the preamble
    expect(schemas).toHaveLength(3);
    for (const s of schemas) expect(s).toEqual({ name: 'facts', schema: expect.objectContaining({ required: ['facts'] }) });
    expect(sent[0].messages[0].content).toContain('Reply with one JSON value that matches the output schema');
    expect((await rebuilt(await h.events(job.sessionId))).map((c) => c.identical)).toEqual([true, true, true]);
  });

  it('schema gate in a zh-Hans session: the [retry N] hints are in the instruction language (Chinese), the [retry N] marker and the schema problems are not translated', async () => {
    queues.set('facts', [text('事实如下：没有。'), text('{"facts": 3}'), text('{"facts": "还是不对"}')]);
    const job = await claimed(await h.input(await h.session({ locale: 'zh-CN' }), '列出事实'));
    const from = h.emulator.requests.length;
    const error = await run(job, 'facts').catch((e: unknown) => e);
    expect((error as AgentLoopError).code).toBe('AGENT_OUTPUT_INVALID');
    const sent = bodies(from);
    expect(sent).toHaveLength(3);
    expect(sent[0].messages[0].content).toContain('只回复一个符合输出模式的 JSON 值'); // the JSON rules, in Chinese too
    expect(sent[1].messages.at(-1)).toEqual({ role: 'user', content: '[retry 1] 你的回复不是 JSON。请重新回复，只给出符合输出模式的 JSON。' });
    expect(sent[2].messages.at(-1)).toEqual({
      role: 'user',
      content: '[retry 2] 你的 JSON 不符合输出模式：/facts: must be array。请重新回复，只给出修正后的 JSON。',
    });
    expect((await rebuilt(await h.events(job.sessionId))).map((c) => c.identical)).toEqual([true, true, true]);
  });

  it('schema gate: a valid output after a retry is committed as the structured output (its JSON text)', async () => {
    queues.set('facts', [text('Prose first.'), text('```json\n{ "facts": ["the door is open"] }\n```')]);
    const job = await claimed();
    expect(await run(job, 'facts')).toBe('produced');
    const events = await h.events(job.sessionId);
    expect(of(events, 'runtime.output.produced@1').map((e) => [e.data.outputKind, e.data.text])).toEqual([['structured', '{"facts":["the door is open"]}']]);
  });

  it('resume: a worker killed between a tool outcome and the next model call; the next attempt sends no recorded call again and executes no recorded tool call again', async () => {
    queues.set('keeper', [tool('lookup', { q: 'door' }), tool('runtime-done', {})]);
    const job = await claimed();
    const from = h.emulator.requests.length;
    // the crash: the append of the second step's llm.calling never happens
    // a run's appends catch up under the stream's lock (ExecutionRun: appendCatchingUp)
    const append = h.deps.store.appendCatchingUp.bind(h.deps.store);
    const spy = jest.spyOn(h.deps.store, 'appendCatchingUp').mockImplementation(async (args) => {
      if (args.events.some((e) => e.type === 'llm.calling@1' && e.data.step === 2)) throw new Error('killed');
      return append(args);
    });
    await expect(run(job, 'keeper')).rejects.toThrow('killed');
    spy.mockRestore();
    expect(h.emulator.requests.length - from).toBe(1);
    expect(executed).toHaveLength(1);
    // the retry: a new attempt of the execution
    const retried = await claimed(job);
    expect(retried.attempt).toBe(2);
    expect(await run(retried, 'keeper')).toBe('produced');
    expect(h.emulator.requests.length - from).toBe(2);
    expect(executed.map((c) => c.name)).toEqual(['lookup', 'runtime-done']);
    const events = await h.events(job.sessionId);
    expect(of(events, 'llm.calling@1').map((e) => [e.data.step, e.data.attempt])).toEqual([
      [1, 1],
      [2, 2],
    ]);
    expect(of(events, 'tool.completed@1').map((e) => [e.data.step, e.data.name])).toEqual([
      [1, 'lookup'],
      [2, 'runtime-done'],
    ]);
    // the resumed step's request is the one the log rebuilds (it carries the recorded result)
    expect((await rebuilt(events)).map((c) => c.identical)).toEqual([true, true]);
    expect(bodies(from)[1].messages.at(-1)).toMatchObject({ role: 'tool', content: '{"found":"door"}' });
  });
});
