import { OpenAIChatAdapter, parseLlmConfig, ProviderEmulator, ProviderError, SlotConfigError } from '..';

describe('OpenAI Chat adapter against the emulator (official SDK over loopback HTTP)', () => {
  const emulator = new ProviderEmulator();
  let adapter: OpenAIChatAdapter;
  beforeAll(async () => {
    await emulator.start();
    adapter = new OpenAIChatAdapter({ apiKey: 'test', baseURL: emulator.openAIBaseURL, maxRetries: 0 });
  });
  afterAll(() => emulator.stop());

  const call = {
    model: 'gpt-4.1-mini',
    messages: [
      { role: 'system' as const, content: 'You are the narrator.' },
      { role: 'user' as const, content: 'Light the lantern' },
    ],
  };

  it('non-streaming: deterministic story text and real-shaped usage', async () => {
    const body = adapter.buildRequest(call);
    expect(body).toEqual({ model: 'gpt-4.1-mini', messages: call.messages });
    const a = await adapter.send(body);
    const b = await adapter.send(body);
    expect(a.text).toContain('you light the lantern');
    expect(a.text).toBe(b.text);
    expect(a.finishReason).toBe('stop');
    expect(a.usage.inputTokens).toBeGreaterThan(0);
    expect(a.usage.outputTokens).toBeGreaterThan(0);
    expect(emulator.requests.at(-1)?.body).toEqual(body);
  });

  it('streaming: deltas add up to the same text, usage arrives in the last chunk', async () => {
    const deltas: string[] = [];
    const body = adapter.buildRequest({ ...call, stream: true });
    expect(body.stream_options).toEqual({ include_usage: true });
    const streamed = await adapter.send(body, { onText: (d) => deltas.push(d) });
    const plain = await adapter.send(adapter.buildRequest(call));
    expect(deltas.length).toBeGreaterThan(3);
    expect(deltas.join('')).toBe(streamed.text);
    expect(streamed.text).toBe(plain.text);
    expect(streamed.usage).toEqual(plain.usage);
  });

  it('a request the provider would reject comes back as a typed ProviderError', async () => {
    await expect(adapter.send({ model: 'x', messages: [] })).rejects.toMatchObject({
      name: 'ProviderError',
      status: 400,
      retryable: false,
    });
    await expect(adapter.send({ model: 'x', messages: [] })).rejects.toBeInstanceOf(ProviderError);
  });
});

describe('llm.toml slots', () => {
  it('parses the repository llm.toml shape', () => {
    const config = parseLlmConfig(`
[slots.story]
protocol = "openai-chat"
model = "m"
contextWindow = 1000
maxOutputTokens = 100
[slots.fast]
protocol = "openai-chat"
model = "f"
contextWindow = 500
maxOutputTokens = 50
`);
    expect(config.slots.story.model).toBe('m');
    expect(config.slots.fast.contextWindow).toBe(500);
  });

  it('bad input names the field', () => {
    expect(() => parseLlmConfig('[slots.story]\nmodel = 3\n')).toThrow(SlotConfigError);
    expect(() => parseLlmConfig('[slots.story]\nmodel = 3\n')).toThrow(/slots\.story\.model/);
  });
});
