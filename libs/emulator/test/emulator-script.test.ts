import { AnthropicAdapter, GeminiAdapter, OpenAIChatAdapter, OpenAIResponsesAdapter, type ProviderAdapter } from '../../providers';
import { ProviderEmulator, type ScriptedCall } from '..';

/** The `script` option: asked first for every call, in every wire format; `undefined` leaves the call to the emulator. */
describe('emulator script', () => {
  const seen: ScriptedCall[] = [];
  const scripted = new ProviderEmulator({
    script: (call) => {
      seen.push(call);
      if (call.transcript.at(-1)?.content === 'unscripted') return undefined;
      return call.transcript.at(-1)?.content === 'use the tool'
        ? { kind: 'tool', name: 'roll', args: { n: 2 } }
        : { kind: 'text', text: `scripted for ${call.protocol}` };
    },
  });
  const plain = new ProviderEmulator();
  beforeAll(async () => {
    await Promise.all([scripted.start(), plain.start()]);
  });
  afterAll(() => Promise.all([scripted.stop(), plain.stop()]));

  const adapters = (e: ProviderEmulator): [string, string, ProviderAdapter][] => [
    ['openai-chat', 'gpt-4.1-mini', new OpenAIChatAdapter({ apiKey: 'k', baseURL: e.openAIBaseURL, maxRetries: 0 })],
    ['openai-responses', 'gpt-4.1-mini', new OpenAIResponsesAdapter({ apiKey: 'k', baseURL: e.openAIBaseURL, maxRetries: 0 })],
    ['anthropic', 'claude-sonnet-4-5', new AnthropicAdapter({ apiKey: 'k', baseURL: e.anthropicBaseURL, maxRetries: 0 })],
    ['gemini', 'gemini-2.5-flash', new GeminiAdapter({ apiKey: 'k', baseURL: e.geminiBaseURL, maxAttempts: 1 })],
  ];
  const send = (adapter: ProviderAdapter, model: string, text: string, extra: { cacheKey?: string; tools?: boolean } = {}) =>
    adapter.send(
      adapter.buildRequest({
        model,
        maxOutputTokens: 200,
        cacheKey: extra.cacheKey,
        ...(extra.tools ? { tools: [{ name: 'roll', description: 'Roll dice', parameters: { type: 'object', properties: { n: { type: 'number' } } } }] } : {}),
        messages: [
          { role: 'system', content: 'You are the narrator.' },
          { role: 'user', content: text },
        ],
      }),
    );

  it('answers every protocol, telling the script the protocol, the model and the OpenAI prompt_cache_key', async () => {
    for (const [protocol, model, adapter] of adapters(scripted)) {
      seen.length = 0;
      expect((await send(adapter, model, 'hello', { cacheKey: 'covel-key' })).text).toBe(`scripted for ${protocol}`);
      expect(seen).toEqual([expect.objectContaining({ protocol, model, cacheKey: protocol.startsWith('openai') ? 'covel-key' : null })]);
      const tool = await send(adapter, model, 'use the tool', { tools: true });
      expect(tool.toolCalls.map((c) => [c.name, c.arguments])).toEqual([['roll', { n: 2 }]]);
    }
  });

  it('a call the script leaves gets the emulator’s own reply; without a script the emulator is unchanged', async () => {
    for (const [[, model, adapter], [, , reference]] of adapters(scripted).map((a, i) => [a, adapters(plain)[i]] as const)) {
      const own = (await send(adapter, model, 'unscripted')).text;
      expect(own).toBe((await send(reference, model, 'unscripted')).text);
      expect(own).not.toMatch(/^scripted/);
    }
  });
});
