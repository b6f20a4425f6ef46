import { ProviderEmulator } from '../../emulator';
import { Continuation } from '..';
import type { ChatMessage, ModelCall, ModelResponse, ProviderAdapter } from '..';
import { weatherTool } from './adapter-contract';

/** One protocol as the tool-loop contract drives it. */
export interface LoopSpec {
  name: string;
  make: (emulator: ProviderEmulator) => ProviderAdapter;
  /** A model without reasoning. */
  model: string;
  /** A model and call settings with reasoning on: its replies carry a continuation. */
  reasoning: { model: string; call: Partial<ModelCall> };
  /** A value of the continuation that must reach the provider again on every later step. */
  marker: (c: Continuation) => string;
  /** The continuation as a careless client would send it back: the provider must refuse it. */
  tamperings: [string, (c: Continuation) => Continuation | undefined][];
  /** What `agent.reasoning: false` puts in the request for the reasoning model. */
  reasoningOff: RegExp;
  /** The model for the `reasoning: false` test, when it is not the reasoning model (one that can turn it off). */
  reasoningOffModel?: string;
}

const low = { overrides: { reasoning: { enabled: true, effort: 'low' as const } } };
const RITUAL: ChatMessage[] = [
  { role: 'system', content: 'You are the narrator.' },
  { role: 'user', content: 'Perform the ritual' },
];

/** The script: two tool rounds for the ritual, then a completion; any other call is the emulator's own. */
const ritualScript = (call: { transcript: { content: string }[]; toolResults: number }) => {
  if (!call.transcript.some((m) => m.content.includes('ritual'))) return undefined;
  return call.toolResults < 2
    ? { kind: 'tool' as const, name: 'record_fact', args: { fact: `step ${call.toolResults + 1}`, weight: 2 } }
    : { kind: 'text' as const, text: `The ritual is complete after ${call.toolResults} tool results.` };
};

/** The assistant message that records a reply, as the engine keeps it: through JSON (the event log). */
export function recordReply(r: ModelResponse): ChatMessage[] {
  const assistant: ChatMessage = {
    role: 'assistant',
    content: r.text,
    toolCalls: r.toolCalls,
    ...(r.thinking ? { thinking: r.thinking } : {}),
    ...(r.continuation ? { continuation: r.continuation } : {}),
  };
  const results: ChatMessage[] = r.toolCalls.map((c) => ({
    role: 'tool',
    content: JSON.stringify({ recorded: c.arguments.fact }),
    toolCallId: c.id,
    toolName: c.name,
  }));
  return JSON.parse(JSON.stringify([assistant, ...results])) as ChatMessage[];
}

async function runLoop(adapter: ProviderAdapter, call: ModelCall) {
  let messages = call.messages;
  const replies: ModelResponse[] = [];
  const bodies: Record<string, unknown>[] = [];
  const deltas: string[] = [];
  for (let step = 0; step < 5; step++) {
    const body = adapter.buildRequest({ ...call, messages });
    bodies.push(body);
    const reply = await adapter.send(body, { onText: (d) => deltas.push(d) });
    replies.push(reply);
    if (reply.toolCalls.length === 0) break;
    messages = [...messages, ...recordReply(reply)];
  }
  return { replies, bodies, messages, deltas };
}

/** A reply without what differs between two runs (the providers' random call ids). */
const comparable = (r: ModelResponse) => ({
  text: r.text,
  toolCalls: r.toolCalls.map((c) => ({ name: c.name, arguments: c.arguments })),
  finishReason: r.finishReason,
  thinking: r.thinking,
  continuation: r.continuation,
});

export function toolLoopContract(spec: LoopSpec) {
  describe(`${spec.name}: the agent tool loop against the emulator`, () => {
    const emulator = new ProviderEmulator({ script: ritualScript });
    let adapter: ProviderAdapter;
    beforeAll(async () => {
      await emulator.start();
      adapter = spec.make(emulator);
    });
    afterAll(() => emulator.stop());

    const plain = (over: Partial<ModelCall> = {}): ModelCall => ({ model: spec.model, messages: RITUAL, tools: [weatherTool], maxOutputTokens: 2000, ...over });
    const reasoning = (over: Partial<ModelCall> = {}): ModelCall => ({ ...plain(), model: spec.reasoning.model, ...spec.reasoning.call, ...over });

    it('two tool rounds, then a completion (no reasoning: nothing to carry)', async () => {
      const { replies } = await runLoop(adapter, plain());
      expect(replies.map((r) => r.toolCalls.map((c) => c.arguments))).toEqual([[{ fact: 'step 1', weight: 2 }], [{ fact: 'step 2', weight: 2 }], []]);
      expect(replies[2].text).toBe('The ritual is complete after 2 tool results.');
      expect(replies.map((r) => r.continuation)).toEqual([undefined, undefined, undefined]);
    });

    it('with reasoning: every step carries a continuation, and each one reaches the provider again on every later step', async () => {
      const { replies, bodies } = await runLoop(adapter, reasoning());
      expect(replies.map((r) => r.toolCalls.length)).toEqual([1, 1, 0]);
      expect(replies[2].text).toBe('The ritual is complete after 2 tool results.');
      for (const r of replies) {
        expect(r.continuation?.protocol).toBe(adapter.protocol);
        // what the engine reads back from its event log
        expect(Continuation.parse(JSON.parse(JSON.stringify(r.continuation)))).toEqual(r.continuation);
      }
      // the continuations of steps 1 and 2 differ (the model thought about different things) and both are in the last request
      const [first, second] = [spec.marker(replies[0].continuation!), spec.marker(replies[1].continuation!)];
      expect(first).not.toBe(second);
      expect(JSON.stringify(bodies[1])).toContain(JSON.stringify(first).slice(1, -1));
      expect(JSON.stringify(bodies[2])).toContain(JSON.stringify(first).slice(1, -1));
      expect(JSON.stringify(bodies[2])).toContain(JSON.stringify(second).slice(1, -1));
      // the request rebuilt from the recorded messages is the same, byte for byte
      const { bodies: again } = await runLoop(adapter, reasoning());
      expect(again.map((b) => JSON.stringify(b).replace(/(toolu|call)_[\w-]+/g, 'ID'))).toEqual(
        bodies.map((b) => JSON.stringify(b).replace(/(toolu|call)_[\w-]+/g, 'ID')),
      );
    });

    it('streaming assembles the same replies, continuations included, as non-streaming; reasoning never reaches onText', async () => {
      for (const call of [plain(), reasoning()]) {
        const streamed = await runLoop(adapter, { ...call, stream: true });
        const whole = await runLoop(adapter, call);
        expect(streamed.replies.map(comparable)).toEqual(whole.replies.map(comparable));
        expect(streamed.deltas.join('')).toBe(streamed.replies.map((r) => r.text).join(''));
      }
    });

    it.each(spec.tamperings)('a continuation sent back with %s is refused as a non-retryable ProviderError', async (_label, tamper) => {
      const first = await adapter.send(adapter.buildRequest(reasoning()));
      const [assistant, ...results] = recordReply(first);
      const tampered = tamper(assistant.continuation!);
      const { continuation: _c, thinking: _t, ...bare } = assistant;
      const messages = [...RITUAL, { ...bare, ...(tampered ? { continuation: tampered } : {}) }, ...results];
      const before = emulator.requests.length;
      await expect(adapter.send(adapter.buildRequest(reasoning({ messages })))).rejects.toMatchObject({
        name: 'ProviderError',
        status: 400,
        retryable: false,
        message: expect.any(String),
      });
      expect(emulator.requests.length - before).toBe(1);
    });

    it('a tool result with no matching call is refused (orphan, and an unknown call id)', async () => {
      const orphan: ChatMessage[] = [...RITUAL, { role: 'tool', content: '{}', toolCallId: 'call_nope', toolName: 'record_fact' }];
      await expect(adapter.send(adapter.buildRequest(plain({ messages: orphan })))).rejects.toMatchObject({
        name: 'ProviderError',
        status: 400,
        retryable: false,
      });
      const first = await adapter.send(adapter.buildRequest(plain()));
      const [assistant] = recordReply(first);
      const wrong: ChatMessage[] = [...RITUAL, assistant, { role: 'tool', content: '{}', toolCallId: 'call_other', toolName: 'other_tool' }];
      await expect(adapter.send(adapter.buildRequest(plain({ messages: wrong })))).rejects.toMatchObject({
        name: 'ProviderError',
        status: 400,
        retryable: false,
      });
    });

    it('toolChoice: a named tool and `required` make the model call a tool; no preference leaves it to the model', async () => {
      const ask: ChatMessage[] = [RITUAL[0], { role: 'user', content: 'Look around' }];
      const named = await adapter.send(adapter.buildRequest(plain({ messages: ask, preferences: { toolChoice: { name: 'record_fact' } } })));
      expect(named.toolCalls.map((c) => [c.name, c.arguments])).toEqual([['record_fact', { fact: 'x', weight: 2 }]]);
      const required = await adapter.send(adapter.buildRequest(plain({ messages: ask, preferences: { toolChoice: 'required' } })));
      expect(required.toolCalls.map((c) => c.name)).toEqual(['record_fact']);
      const free = await adapter.send(adapter.buildRequest(plain({ messages: ask })));
      expect(free.toolCalls).toEqual([]);
      // with reasoning on, the request is still accepted (each protocol's fallback applies)
      await expect(
        adapter.send(adapter.buildRequest(reasoning({ messages: ask, preferences: { toolChoice: { name: 'record_fact' } } }))),
      ).resolves.toBeDefined();
    });

    it('reasoning: false turns the reasoning model’s reasoning off: no continuation, and the loop still completes', async () => {
      const { replies, bodies } = await runLoop(adapter, plain({ model: spec.reasoningOffModel ?? spec.reasoning.model, preferences: { reasoning: false } }));
      expect(JSON.stringify(bodies[0])).toMatch(spec.reasoningOff);
      expect(replies.map((r) => r.toolCalls.length)).toEqual([1, 1, 0]);
      expect(replies.map((r) => r.continuation)).toEqual([undefined, undefined, undefined]);
      expect(replies.map((r) => r.thinking)).toEqual([undefined, undefined, undefined]);
      // the same model with reasoning turned on does reason: the preference is what turned it off
      const on = await adapter.send(adapter.buildRequest(plain({ model: spec.reasoningOffModel ?? spec.reasoning.model, ...low })));
      expect(on.continuation?.protocol).toBe(adapter.protocol);
    });
  });
}
