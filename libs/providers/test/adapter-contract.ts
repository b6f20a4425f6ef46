import { ProviderError } from '..';
import { ProviderEmulator } from '../../emulator';
import type { ChatMessage, ModelCall, ProviderAdapter, ToolDefinition } from '..';

/** The same behaviour checked through every adapter and its real SDK against the emulator. */
export const weatherTool: ToolDefinition = {
  name: 'record_fact',
  description: 'Record one fact about the scene.',
  parameters: { type: 'object', properties: { fact: { type: 'string' }, weight: { type: 'integer', minimum: 2 } }, required: ['fact', 'weight'] },
};

const base = (model: string, messages: ChatMessage[]): ModelCall => ({ model, messages, maxOutputTokens: 400 });
const conversation: ChatMessage[] = [
  { role: 'system', content: 'You are the narrator.' },
  { role: 'user', content: 'Light the lantern' },
];

export function adapterContract(name: string, model: string, make: (emulator: ProviderEmulator) => ProviderAdapter) {
  describe(`${name} adapter through its SDK against the emulator`, () => {
    const emulator = new ProviderEmulator();
    let adapter: ProviderAdapter;
    beforeAll(async () => {
      await emulator.start();
      adapter = make(emulator);
    });
    afterAll(() => emulator.stop());

    it('text: deterministic story text and usage', async () => {
      const a = await adapter.send(adapter.buildRequest(base(model, conversation)));
      const b = await adapter.send(adapter.buildRequest(base(model, conversation)));
      expect(a.text).toMatch(/you light the lantern/);
      expect(a.text).toBe(b.text);
      expect(a.toolCalls).toEqual([]);
      expect(a.usage.inputTokens).toBeGreaterThan(0);
      expect(a.usage.outputTokens).toBeGreaterThan(0);
    });

    it('streaming: deltas add up to the same text and usage', async () => {
      const deltas: string[] = [];
      const streamed = await adapter.send(adapter.buildRequest({ ...base(model, conversation), stream: true }), { onText: (d) => deltas.push(d) });
      const plain = await adapter.send(adapter.buildRequest(base(model, conversation)));
      expect(deltas.length).toBeGreaterThan(3);
      expect(deltas.join('')).toBe(streamed.text);
      expect(streamed.text).toBe(plain.text);
      expect(streamed.usage.outputTokens).toBe(plain.usage.outputTokens);
    });

    it('tool loop: a forced tool is called with valid arguments, its result answered in text', async () => {
      for (const stream of [false, true]) {
        const call: ModelCall = { ...base(model, conversation), tools: [weatherTool], preferences: { toolChoice: { name: 'record_fact' } }, stream };
        const first = await adapter.send(adapter.buildRequest(call));
        expect(first.toolCalls).toEqual([{ id: expect.any(String), name: 'record_fact', arguments: { fact: 'x', weight: 2 } }]);
        const messages: ChatMessage[] = [
          ...conversation,
          { role: 'assistant', content: '', toolCalls: first.toolCalls },
          { role: 'tool', content: '{"ok":true}', toolCallId: first.toolCalls[0].id, toolName: 'record_fact' },
        ];
        const second = await adapter.send(adapter.buildRequest({ ...call, messages, preferences: {} }));
        expect(second.toolCalls).toEqual([]);
        expect(second.text.length).toBeGreaterThan(10);
      }
    });

    it('output schema: the reply is JSON matching it', async () => {
      const schema = {
        type: 'object',
        properties: { mood: { type: 'string', enum: ['calm', 'tense'] }, score: { type: 'integer', minimum: 3 } },
        required: ['mood', 'score'],
      };
      const system = `You rate the scene.\n<output-schema>\n${JSON.stringify(schema)}\n</output-schema>`;
      const r = await adapter.send(
        adapter.buildRequest({
          ...base(model, [
            { role: 'system', content: system },
            { role: 'user', content: 'Rate it' },
          ]),
          outputSchema: { name: 'rating', schema },
        }),
      );
      expect(JSON.parse(r.text)).toEqual({ mood: 'calm', score: 3 });
    });

    it('images: inline base64 reaches the provider in its own shape', async () => {
      const png = Buffer.from('89504e470d0a1a0a', 'hex').toString('base64');
      const before = emulator.requests.length;
      await adapter.send(
        adapter.buildRequest(base(model, [conversation[0], { role: 'user', content: 'Look', images: [{ mimeType: 'image/png', data: png }] }])),
      );
      expect(emulator.requests[before].raw).toContain(png);
    });

    it('errors: a 400 is a typed, non-retryable error; 503 and 429 are retried by the SDK', async () => {
      emulator.injectFault({ status: 400, times: 1, message: 'bad thing' });
      await expect(adapter.send(adapter.buildRequest(base(model, conversation)))).rejects.toMatchObject({
        name: 'ProviderError',
        status: 400,
        retryable: false,
      });
      emulator.injectFault({ status: 503, times: 1 });
      emulator.injectFault({ status: 429, times: 1 });
      const before = emulator.requests.length;
      const ok = await adapter.send(adapter.buildRequest(base(model, conversation)));
      expect(ok.text).toMatch(/lantern/);
      expect(emulator.requests.length - before).toBe(3);
    }, 30_000);

    it('a request the provider would reject comes back as ProviderError', async () => {
      await expect(adapter.send({ model, messages: [], contents: [] })).rejects.toBeInstanceOf(ProviderError);
    });
  });
}
