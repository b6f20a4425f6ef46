import { join } from 'node:path';
import type { Reply, ScriptedCall } from '../../../emulator';
import type { EventData, StoredEvent } from '../../../events';
import type { ToolDefinition } from '../../../providers';
import type { ToolOutcome, ToolSet } from '../../tools';
import { auditTurn } from '../../audit/turn-audit';
import { historyReadLimit } from '../../execution/deps';
import { TurnRunner } from '../../turn/turn-runner';
import { playToEnd, storySlot, type TurnHarness, turnHarness } from '../../turn/test/harness';
import { finalizerPrompt } from '../finalizer';

const LONG = Array.from({ length: 200 }, () => 'Surveys the land and reports what it finds in great detail.').join(' ');
const DEFINITIONS: ToolDefinition[] = [
  { name: 'lookup', description: 'Looks a thing up.', parameters: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] } },
  { name: 'survey', description: LONG, parameters: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] } },
];
const tools: ToolSet = {
  definitions: (runtime) => DEFINITIONS.filter((d) => runtime.manifest.agent?.tools.includes(d.name)),
  execute: async (): Promise<ToolOutcome> => ({ content: '{"found":"a map"}', ok: true, changes: [], emissions: [] }),
};
/** With tools: one more tool call (a new one each time; `survey` with a long argument); with tools off (tool_choice none): the final answer (prose for strict). */
function script(call: ScriptedCall): Reply | undefined {
  const system = call.transcript[0]?.content ?? '';
  if (call.tools.length === 0 || call.toolChoice === 'none')
    return { kind: 'text', text: system.includes('runtime strict/strict') ? 'Only prose, no JSON.' : 'The final answer: a map.' };
  if (call.tools.some((t) => t.name === 'survey')) return { kind: 'tool', name: 'survey', args: { q: 'x'.repeat(10_000) } };
  return { kind: 'tool', name: 'lookup', args: { q: `place ${call.toolResults}` } };
}

type Calling = EventData<'llm.calling@1'>;
const callings = (events: StoredEvent[]): Calling[] => events.flatMap((e) => (e.type === 'llm.calling@1' ? [e.data] : []));
const wire = (c: Calling) => JSON.parse(c.body) as { tools?: unknown[]; tool_choice?: unknown; messages: { role: string; content: unknown }[] };
/** Tools off: the same definitions as the earlier steps (the cached prefix holds), with tool_choice none. */
const toolsOff = (c: Calling) => ({ tools: wire(c).tools, choice: wire(c).tool_choice });
async function turn(h: TurnHarness) {
  const { job, events } = await playToEnd(h);
  return { ...job, events };
}

const committedText = (events: StoredEvent[]) =>
  events.flatMap((e) => (e.type === 'turn.committed@1' ? e.data.messages.filter((m) => m.role === 'assistant').map((m) => m.text) : []));
const audited = (h: TurnHarness, sessionId: string, turnId: string) =>
  auditTurn({ ...h.deps, historyReadLimit: historyReadLimit(h.deps), tools }, sessionId, turnId);

describe('the finalizer after the step limit', () => {
  let h: TurnHarness;
  beforeAll(async () => {
    h = await turnHarness({ pluginsDir: join(__dirname, 'fixtures-finalizer'), script, tools, handlers: (deps) => new TurnRunner(deps) });
  });
  afterAll(async () => {
    await h?.close(); // nothing to close when the setup did not finish
  });

  it('asks once more with tools off for the final answer (mode finalizer), whose text completes the runtime; rebuilt byte for byte', async () => {
    const { events, sessionId, turnId } = await turn(h);
    const calls = callings(events);
    expect(calls.map((c) => [c.step, c.budget?.mode])).toEqual([
      [1, 'normal'],
      [2, 'normal'],
      [3, 'finalizer'],
    ]);
    expect(wire(calls[1]).tools).toHaveLength(1);
    expect(toolsOff(calls[2])).toEqual({ tools: wire(calls[0]).tools, choice: 'none' });
    expect(wire(calls[2]).messages.at(-1)).toEqual({ role: 'user', content: finalizerPrompt('en').content });
    expect(committedText(events)).toEqual(['The final answer: a map.']);
    expect((await audited(h, sessionId, turnId)).identical).toBe(true);
  });
});

describe('the finalizer rescuing a request over the input limit', () => {
  // input limit 4,500: the tool definition (~3,000) and the first step fit; the second step carries
  // the call's ~2,500-token argument and is over; without the tool definitions (tools off) it fits
  const llm = storySlot({ contextWindow: 4_500 + 1024, maxOutputTokens: 1024 });
  let rescue: TurnHarness;
  let strict: TurnHarness;
  beforeAll(async () => {
    // two engines (a PGlite database each): started side by side, with a limit for a loaded machine
    [rescue, strict] = await Promise.all([
      turnHarness({ pluginsDir: join(__dirname, 'fixtures-rescue'), script, tools, handlers: (deps) => new TurnRunner(deps), llm }),
      turnHarness({ pluginsDir: join(__dirname, 'fixtures-rescue-fail'), script, tools, handlers: (deps) => new TurnRunner(deps), llm }),
    ]);
  }, 60_000);
  afterAll(async () => {
    // nothing to close when the setup did not finish
    await rescue?.close();
    await strict?.close();
  });

  it('an overflowing step with a complete tool group is tried once with tools off (mode emergency): the rescued answer completes the runtime', async () => {
    const from = rescue.emulator.requests.length;
    const { events, sessionId, turnId } = await turn(rescue);
    const calls = callings(events);
    // the overflowing normal step 2 was never sent; the emergency request took its place
    expect(calls.map((c) => [c.step, c.budget?.mode])).toEqual([
      [1, 'normal'],
      [2, 'emergency'],
    ]);
    expect(rescue.emulator.requests.length - from).toBe(2);
    expect(toolsOff(calls[1])).toEqual({ tools: wire(calls[0]).tools, choice: 'none' });
    expect(wire(calls[1]).messages.at(-1)).toEqual({ role: 'user', content: finalizerPrompt('en').content });
    expect(calls[1].budget!.stats.after).toBeLessThanOrEqual(calls[1].budget!.stats.inputLimit);
    expect(committedText(events)).toEqual(['The final answer: a map.']);
    expect((await audited(rescue, sessionId, turnId)).identical).toBe(true);
  });

  it('a rescue whose answer does not complete the runtime (prose under an output schema) fails it with the overflow text', async () => {
    const from = strict.emulator.requests.length;
    const { events, executionId } = await turn(strict);
    expect(callings(events).map((c) => [c.step, c.budget?.mode])).toEqual([
      [1, 'normal'],
      [2, 'emergency'],
    ]);
    expect(strict.emulator.requests.length - from).toBe(2);
    const failed = events.flatMap((e) => (e.type === 'execution.failed@1' ? [e.data] : []));
    expect(failed.map((f) => f.executionId)).toEqual([executionId]);
    expect(failed[0].error.code).toBe('AGENT_CONTEXT_OVERFLOW');
    expect(failed[0].error.message).toMatch(/^runtime strict\/strict \S/);
  });
});

describe('the finalizer and a first step over the input limit', () => {
  let h: TurnHarness;
  beforeAll(async () => {
    // input limit 76 tokens: the first step's system prompt and current turn alone are over it
    h = await turnHarness({
      pluginsDir: join(__dirname, 'fixtures-finalizer'),
      script,
      tools,
      handlers: (deps) => new TurnRunner(deps),
      llm: storySlot({ contextWindow: 1100, maxOutputTokens: 1024 }),
    });
  });
  afterAll(async () => {
    await h?.close(); // nothing to close when the setup did not finish
  });

  it('without a complete tool group there is no rescue: nothing is sent, the runtime fails with context-overflow', async () => {
    const from = h.emulator.requests.length;
    const { events } = await turn(h);
    expect(h.emulator.requests.length).toBe(from);
    expect(callings(events)).toEqual([]);
    const failed = events.flatMap((e) => (e.type === 'execution.failed@1' ? [e.data] : []));
    expect(failed.map((f) => f.error.code)).toEqual(['AGENT_CONTEXT_OVERFLOW']);
  });
});
