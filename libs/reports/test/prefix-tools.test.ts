import {
  AnthropicAdapter,
  type ChatMessage,
  GeminiAdapter,
  OpenAIChatAdapter,
  OpenAIResponsesAdapter,
  type ProviderAdapter,
  type ToolDefinition,
} from '../../providers';
import { comparePrefix, prefixReport, type RecordedCall, type RecordedRequest } from '..';

/** Each protocol's adapter and a model of it: the recorded bodies are built the way the worker builds them. */
const PROTOCOLS: [string, ProviderAdapter, string][] = [
  ['openai-chat', new OpenAIChatAdapter({ apiKey: 'k' }), 'gpt-4.1'],
  ['openai-responses', new OpenAIResponsesAdapter({ apiKey: 'k' }), 'gpt-4.1'],
  ['anthropic', new AnthropicAdapter({ apiKey: 'k' }), 'claude-sonnet-4-5'],
  ['gemini', new GeminiAdapter({ apiKey: 'k' }), 'gemini-2.5-pro'],
];

const NOTE: ToolDefinition = {
  name: 'note',
  description: 'Notes a line in the ledger.',
  parameters: { type: 'object', properties: { key: { type: 'string' } }, required: ['key'] },
};
const LOOKUP: ToolDefinition = { name: 'lookup', description: 'Looks a line up.', parameters: { type: 'object', properties: { key: { type: 'string' } } } };
const SYSTEM = 'You keep the ledger of the story. Write down what changed.';

/** The conversation of turn `turn` (1-based): the earlier turns, the player input, then `steps` - 1 tool rounds of the loop. */
function conversation(turn: number, steps: number, system = SYSTEM): ChatMessage[] {
  const messages: ChatMessage[] = [{ role: 'system', content: system }];
  for (let t = 1; t < turn; t++) messages.push({ role: 'user', content: `input ${t}` }, { role: 'assistant', content: `story ${t}` });
  messages.push({ role: 'user', content: `input ${turn}` });
  for (let s = 1; s < steps; s++) {
    const id = `call-${turn}-${s}`;
    messages.push(
      { role: 'assistant', content: '', toolCalls: [{ id, name: 'note', arguments: { key: `line ${turn}.${s}` } }] },
      { role: 'tool', content: '{"noted":true}', toolCallId: id, toolName: 'note' },
    );
  }
  return messages;
}

const request = (adapter: ProviderAdapter, model: string, messages: ChatMessage[], tools: ToolDefinition[]): RecordedRequest => ({
  protocol: adapter.protocol,
  body: adapter.buildRequest({ model, messages, ...(tools.length ? { tools } : {}), cacheBoundaries: true }),
});

describe.each(PROTOCOLS)('prompt:prefix on %s request bodies', (protocol, adapter, model) => {
  it('a tool loop: only the first request of each turn per runtime is compared, with the previous turn’s first; later steps are skipped', () => {
    const calls: RecordedCall[] = [];
    const firstSteps: RecordedRequest[] = [];
    const lastSteps: RecordedRequest[] = [];
    let position = 0;
    for (let turn = 1; turn <= 3; turn++) {
      const base = { sessionId: 's', turnId: `t${turn}` };
      const story = request(adapter, model, conversation(turn, 1, 'You tell the story.'), []);
      calls.push({ ...story, ...base, pluginId: 'narrator', runtimeId: 'narrator', callId: `narrator-${turn}`, position: ++position });
      // three steps of the ledger's loop (two tool rounds, then its completion), interleaved with nothing else
      for (let step = 1; step <= 3; step++) {
        const r = request(adapter, model, conversation(turn, step), [NOTE, LOOKUP]);
        calls.push({ ...r, ...base, pluginId: 'ledger', runtimeId: 'ledger', callId: `ledger-${turn}-${step}`, position: ++position });
        if (step === 1) firstSteps.push(r);
        lastSteps.push(r);
      }
    }
    // given out of log order: the report orders by position
    const rows = prefixReport([...calls].reverse());
    expect(rows.map((r) => [r.turn, r.runtime, r.callId])).toEqual([
      [1, 'narrator/narrator', 'narrator-1'],
      [1, 'ledger/ledger', 'ledger-1-1'],
      [2, 'narrator/narrator', 'narrator-2'],
      [2, 'ledger/ledger', 'ledger-2-1'],
      [3, 'narrator/narrator', 'narrator-3'],
      [3, 'ledger/ledger', 'ledger-3-1'],
    ]);
    const ledger = rows.filter((r) => r.runtime === 'ledger/ledger');
    expect(ledger[0].sharedTokens).toBeNull();
    for (const turn of [2, 3]) {
      const expected = comparePrefix(firstSteps[turn - 2], firstSteps[turn - 1]);
      expect(ledger[turn - 1]).toMatchObject({
        sharedTokens: expected.sharedTokens,
        sharedPercent: expected.sharedPercent,
        firstDifference: expected.firstDifference,
      });
      // compared with the previous turn's last step instead, the figures would differ: the loop's tool rounds are not the prefix
      expect(comparePrefix(lastSteps[3 * (turn - 2) + 2], firstSteps[turn - 1]).firstDifference).not.toEqual(expected.firstDifference);
      // the tools and the system part are intact; the first difference is in the messages
      expect(expected.firstDifference!.messageIndex).not.toBeNull();
    }
  });

  it('changed tool definitions are the first difference, before a changed system part; unchanged tools put it in the system part', () => {
    const renamed: ToolDefinition = { ...NOTE, description: 'Notes one line in the ledger.' };
    const previous = request(adapter, model, conversation(1, 1), [NOTE, LOOKUP]);

    const both = comparePrefix(previous, request(adapter, model, conversation(2, 1, `${SYSTEM} Be brief.`), [renamed, LOOKUP])).firstDifference!;
    expect(both).toMatchObject({ messageIndex: null, role: 'tools' });
    expect(both.offset).toBeGreaterThan(0);
    expect(both.before.slice(both.before.indexOf('Notes'))).toMatch(/^Notes a line/);
    expect(both.after.slice(both.after.indexOf('Notes'))).toMatch(/^Notes one line/);

    // a runtime that had no tools and now has some: the tools, from their first byte
    const added = comparePrefix(request(adapter, model, conversation(1, 1), []), request(adapter, model, conversation(2, 1), [NOTE]));
    expect(added.firstDifference).toMatchObject({ messageIndex: null, role: 'tools', offset: 0 });

    const system = comparePrefix(previous, request(adapter, model, conversation(2, 1, `${SYSTEM} Be brief.`), [NOTE, LOOKUP])).firstDifference!;
    // Chat keeps the system prompt as its first message; the other protocols lift it out of the messages
    expect(system).toMatchObject({ messageIndex: protocol === 'openai-chat' ? 0 : null, role: 'system', offset: SYSTEM.length });
    expect(system.after).toContain('Be brief.');
  });
});
