import { join } from 'node:path';
import { estimateRequest, estimateTokens, type LedgerEntry } from '../../../context';
import type { ScriptedCall, Reply } from '../../../emulator';
import type { EventData, StoredEvent } from '../../../events';
import type { ToolDefinition } from '../../../providers';
import { slotEstimator } from '../../budget';
import { rebuildRequests } from '../../audit/request-rebuild';
import type { RuntimeRequest, RuntimeRequestInputs } from '../../request/runtime-request';
import type { ToolOutcome, ToolSet } from '../../tools';
import { auditTurn } from '../../audit/turn-audit';
import { historyReadLimit } from '../../execution/deps';
import { TurnRunner } from '../../turn/turn-runner';
import { playToEnd, playTurn, storySlot, type TurnHarness, turnHarness } from '../../turn/test/harness';
import { seen as hookSaw } from './fixtures-budget-hook/teller/server';
import { CHRONICLE, seen as grown } from './fixtures-budget-grow/chronicler/server';

/** digger: looks two things up, then tells its story. */
const DEFINITIONS: ToolDefinition[] = [
  { name: 'lookup', description: 'Looks a thing up.', parameters: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] } },
];
const tools: ToolSet = {
  definitions: (runtime) => DEFINITIONS.filter((d) => runtime.manifest.agent?.tools.includes(d.name)),
  execute: async (call): Promise<ToolOutcome> => ({ content: JSON.stringify({ found: call.arguments.q }), ok: true, changes: [], emissions: [] }),
};
function script(call: ScriptedCall): Reply | undefined {
  if (call.toolResults === 0) return { kind: 'tool', name: 'lookup', args: { q: 'gate' } };
  if (call.toolResults === 1) return { kind: 'tool', name: 'lookup', args: { q: 'road' } };
  return { kind: 'text', text: 'The gate opens onto the salt road.' };
}

type Calling = EventData<'llm.calling@1'>;
const callings = (events: StoredEvent[]): Calling[] => events.flatMap((e) => (e.type === 'llm.calling@1' ? [e.data] : []));
const FIXTURES = join(__dirname, 'fixtures-budget');

/** The repository's llm.toml with the story slot changed. */
async function turn(h: TurnHarness) {
  const { job, events } = await playToEnd(h);
  return { ...job, events };
}

describe('the token budget of an agent loop (roomy window, a response reserve under maxOutputTokens, a real tokenizer)', () => {
  let h: TurnHarness;
  beforeAll(async () => {
    h = await turnHarness({
      pluginsDir: FIXTURES,
      script,
      tools,
      handlers: (deps) => new TurnRunner(deps),
      llm: storySlot({ contextWindow: 128_000, maxOutputTokens: 1024, responseReserve: 300, tokenizer: 'o200k_base' }),
    });
  });
  afterAll(() => h.close());

  const rebuilt = (events: StoredEvent[], inspect?: (request: RuntimeRequest & { inputs: RuntimeRequestInputs }) => void) =>
    rebuildRequests(events, h.deps.catalog, h.deps.providers, h.deps.worlds, {
      historyReadLimit: historyReadLimit(h.deps),
      tools,
      ...(inspect ? { inspect: (_call, request) => inspect(request) } : {}),
    });

  it('every step records its budget (mode, ledger entries added, the estimate against contextWindow − responseReserve); the reserve caps the output on the wire', async () => {
    const { events, sessionId, turnId } = await turn(h);
    expect(events.some((e) => e.type === 'turn.committed@1')).toBe(true);
    const calls = callings(events);
    expect(calls.map((c) => c.step)).toEqual([1, 2, 3]);
    for (const c of calls) {
      expect(c.budget?.mode).toBe('normal');
      expect(Array.isArray(c.budget?.added)).toBe(true);
      expect(c.budget?.stats.inputLimit).toBe(128_000 - 300);
      // the reserve (300), not maxOutputTokens (1024), is the call's output limit
      expect((JSON.parse(c.body) as { max_completion_tokens: number }).max_completion_tokens).toBe(300);
    }
    expect(calls[2].budget!.stats.before).toBeGreaterThan(calls[0].budget!.stats.before);
    const audit = await auditTurn({ ...h.deps, historyReadLimit: historyReadLimit(h.deps), tools }, sessionId, turnId);
    expect(audit.calls).toHaveLength(3);
    expect(audit.identical).toBe(true);
  });

  it("the slot's tokenizer is the estimate: the recorded estimate is the o200k count of the request, not the character estimate", async () => {
    const { events } = await turn(h);
    const o200k = await slotEstimator({ tokenizer: 'o200k_base' });
    const estimates: { tokenizer: number; chars: number }[] = [];
    await rebuilt(events, (request) => {
      const sent = { messages: request.messages, tools: request.call.tools, responseSchema: request.call.outputSchema?.schema };
      estimates.push({ tokenizer: estimateRequest({ ...sent, estimator: o200k }), chars: estimateRequest({ ...sent, estimator: estimateTokens }) });
    });
    const recorded = callings(events).map((c) => c.budget!.stats.before);
    expect(recorded).toEqual(estimates.map((e) => e.tokenizer));
    expect(recorded).not.toEqual(estimates.map((e) => e.chars));
  });

  it("the rebuild replays the ledger the earlier steps' calls recorded (by step, first call per step); a call recorded without a budget is rebuilt without one", async () => {
    const { events } = await turn(h);
    const entry: LedgerEntry = { kind: 'elide', calls: [{ id: 'call-x', name: 'lookup', arguments: '{"q":"nowhere"}', result: '{"found":"nowhere"}' }] };
    // step 1's call as if its budget had elided a group (no group of this request matches it: replaying it changes nothing)
    const withEntry = events.map((e) =>
      e.type === 'llm.calling@1' && e.data.step === 1 ? { ...e, data: { ...e.data, budget: { ...e.data.budget!, added: [entry] } } } : e,
    );
    const seen: (readonly LedgerEntry[] | undefined)[] = [];
    const again = await rebuilt(withEntry, (request) => seen.push(request.inputs.budget?.ledger.entries));
    expect(seen).toEqual([[], [entry], [entry]]);
    expect(again.every((c) => c.identical)).toBe(true);
    // a log before the budget: no budget field, no budget in the rebuild
    const before = events.map((e) => {
      if (e.type !== 'llm.calling@1') return e;
      const { budget: _budget, ...data } = e.data;
      return { ...e, data };
    });
    const none: unknown[] = [];
    await rebuilt(before, (request) => none.push(request.inputs.budget));
    expect(none).toEqual([undefined, undefined, undefined]);
  });
});

describe('a request over the input limit', () => {
  let h: TurnHarness;
  beforeAll(async () => {
    // input limit 76 tokens: the system prompt and the protected current turn alone are over it, no trimming can help
    h = await turnHarness({
      pluginsDir: FIXTURES,
      script,
      tools,
      handlers: (deps) => new TurnRunner(deps),
      llm: storySlot({ contextWindow: 1100, maxOutputTokens: 1024 }),
    });
  });
  afterAll(() => h.close());

  it('is never sent: no llm.calling, the emulator sees no request; the runtime fails with context-overflow and the overflow text', async () => {
    const from = h.emulator.requests.length;
    const { events, executionId } = await turn(h);
    expect(h.emulator.requests.length).toBe(from);
    expect(callings(events)).toEqual([]);
    const failed = events.flatMap((e) => (e.type === 'execution.failed@1' ? [e.data] : []));
    expect(failed.map((f) => f.executionId)).toEqual([executionId]);
    expect(failed[0].error.code).toBe('AGENT_CONTEXT_OVERFLOW');
    expect(failed[0].error.message).toMatch(/^runtime digger\/digger \S/);
    expect(events.some((e) => e.type === 'turn.committed@1')).toBe(false);
  });
});

describe('a PostContextAssembly hook on a request whose history is over the input limit', () => {
  // spec §5: "Budget checks happen in three places: when the context is assembled, after
  // PostContextAssembly, and on the actual request after each PreLLMCall."
  const REPLY = 'The salt road bends past the old gate. '.repeat(30); // cut at 1,024 characters (maxOutputTokens 256): ~260 tokens a reply
  const TRIMMED = '[Earlier messages were removed here to save context.]';
  let h: TurnHarness;
  beforeAll(async () => {
    // input limit 844 tokens: the fourth turn's history (three replies) is over it, the current turn alone is not
    h = await turnHarness({
      pluginsDir: join(__dirname, 'fixtures-budget-hook'),
      script: () => ({ kind: 'text', text: REPLY }),
      handlers: (deps) => new TurnRunner(deps),
      llm: storySlot({ contextWindow: 1100, maxOutputTokens: 256 }),
    });
  });
  afterAll(() => h.close());

  async function play(session: { tenantId: string; sessionId: string }, text: string) {
    const { job, events } = await playTurn(h, session, text);
    expect(events.some((e) => e.type === 'turn.committed@1' && e.data.executionId === job.executionId)).toBe(true);
    return job;
  }

  it('the hook is given the assembly as trimmed by the check at assembly (pruned history, the trim marker), and the request sends what it returned', async () => {
    const session = await h.session();
    for (const text of ['First, the gate.', 'Second, the road.', 'Third, the inn.']) await play(session, text);
    hookSaw.length = 0;
    const job = await play(session, 'Fourth, the bridge.');
    const calls = callings(await h.events(session.sessionId)).filter((c) => c.turnId === job.turnId);
    expect(calls).toHaveLength(1);
    expect(calls[0].budget!.stats.pruned).toBeGreaterThan(0);

    // the hook ran once, on the pruned history: the marker where the oldest turns were, the first turn gone
    expect(hookSaw).toHaveLength(1);
    const given = hookSaw[0].map((m) => m.content);
    expect(given).toContain(TRIMMED);
    expect(given).not.toContain('First, the gate.');
    expect(given.at(-1)).toBe('Fourth, the bridge.');
    // under the limit after the hook, nothing more was trimmed: the request sends what the hook returned
    const sent = JSON.parse(calls[0].body) as { messages: { role: string; content: string }[] };
    expect(sent.messages.slice(1).map((m) => m.content)).toEqual(given);

    const audit = await auditTurn({ ...h.deps, historyReadLimit: historyReadLimit(h.deps) }, session.sessionId, job.turnId);
    expect(audit.identical).toBe(true);
  });
});

describe('a PostContextAssembly hook that puts a request over the input limit', () => {
  // spec §5 (rule 5.2): the check after PostContextAssembly, before the PreLLMCall hooks
  const TRIMMED = '[Earlier messages were removed here to save context.]';
  let h: TurnHarness;
  beforeAll(async () => {
    // input limit 844 tokens: the first turn alone is under it, with the hook's chronicle (~1,000 tokens) it is not
    h = await turnHarness({
      pluginsDir: join(__dirname, 'fixtures-budget-grow'),
      script: () => ({ kind: 'text', text: 'The bridge holds.' }),
      handlers: (deps) => new TurnRunner(deps),
      llm: storySlot({ contextWindow: 1100, maxOutputTokens: 256 }),
    });
  });
  afterAll(() => h.close());

  it('is checked again after the hook: the PreLLMCall hook is already given the trimmed request (the trim marker, no chronicle), and the request sends it', async () => {
    grown.postContextAssembly.length = 0;
    grown.preLlmCall.length = 0;
    const session = await h.session();
    const { job, events } = await playTurn(h, session, 'First, the bridge.');
    expect(events.some((e) => e.type === 'turn.committed@1' && e.data.executionId === job.executionId)).toBe(true);
    const calls = callings(events).filter((c) => c.turnId === job.turnId);
    expect(calls).toHaveLength(1);
    expect(calls[0].budget!.stats.pruned).toBe(1);

    // the check at assembly trimmed nothing: the hook was given the whole assembly, no marker
    expect(grown.postContextAssembly).toHaveLength(1);
    expect(grown.postContextAssembly[0]).not.toContain(TRIMMED);
    expect(grown.postContextAssembly[0].at(-1)).toBe('First, the bridge.');
    // the check after it pruned the chronicle the hook added, before the PreLLMCall hook ran
    expect(grown.preLlmCall).toHaveLength(1);
    const given = grown.preLlmCall[0].map((m) => m.content);
    expect(given).toContain(TRIMMED);
    expect(given).not.toContain(CHRONICLE);
    expect(given.slice(1)).toEqual([TRIMMED, ...grown.postContextAssembly[0]]);
    // under the limit now, the request check changed nothing: the request sends the messages the PreLLMCall hook was given
    const sent = JSON.parse(calls[0].body) as { messages: { role: string; content: string }[] };
    expect(sent.messages.slice(1).map((m) => m.content)).toEqual(given.slice(1));

    const audit = await auditTurn({ ...h.deps, historyReadLimit: historyReadLimit(h.deps) }, session.sessionId, job.turnId);
    expect(audit.identical).toBe(true);
  });
});
