import { AnthropicAdapter, GeminiAdapter, OpenAIChatAdapter, OpenAIResponsesAdapter, type ProviderAdapter, ProviderError } from '../../providers';
import { ProviderEmulator, type RecordedRequest } from '..';

/**
 * A call aborted mid-stream (its `AbortSignal`, through the adapter, into the provider's SDK): the
 * SDK closes the connection and the emulator records that its client left before the reply ended.
 */
describe('emulator: a client that closes the connection mid-reply', () => {
  const TEXT = Array.from({ length: 20 }, (_, i) => `word${i}`).join(' ');
  const emulator = new ProviderEmulator({ chunkDelayMs: 20, script: () => ({ kind: 'text', text: TEXT }) });
  beforeAll(() => emulator.start());
  afterAll(() => emulator.stop());

  /** Each protocol's adapter and a model of it (made once the emulator listens). */
  const adapters: Record<string, () => [string, ProviderAdapter]> = {
    'openai-chat': () => ['gpt-4.1-mini', new OpenAIChatAdapter({ apiKey: 'k', baseURL: emulator.openAIBaseURL, maxRetries: 0 })],
    'openai-responses': () => ['gpt-4.1-mini', new OpenAIResponsesAdapter({ apiKey: 'k', baseURL: emulator.openAIBaseURL, maxRetries: 0 })],
    anthropic: () => ['claude-sonnet-4-5', new AnthropicAdapter({ apiKey: 'k', baseURL: emulator.anthropicBaseURL, maxRetries: 0 })],
    gemini: () => ['gemini-2.5-flash', new GeminiAdapter({ apiKey: 'k', baseURL: emulator.geminiBaseURL, maxAttempts: 1 })],
  };
  const streamed = (adapter: ProviderAdapter, model: string) =>
    adapter.buildRequest({ model, maxOutputTokens: 200, stream: true, messages: [{ role: 'user', content: 'Tell me a story' }] });

  async function closedOf(request: RecordedRequest): Promise<RecordedRequest['clientClosed']> {
    for (let i = 0; i < 500 && !request.clientClosed; i++) await new Promise((r) => setTimeout(r, 10));
    return request.clientClosed;
  }

  it.each(Object.keys(adapters))('%s: aborting after the first text delta closes the connection; the emulator records it', async (protocol) => {
    const [model, adapter] = adapters[protocol]();
    const abort = new AbortController();
    const deltas: string[] = [];
    const sent = adapter.send(streamed(adapter, model), {
      signal: abort.signal,
      onText: (delta) => {
        deltas.push(delta);
        abort.abort();
      },
    });
    await expect(sent).rejects.toBeInstanceOf(ProviderError);
    const closed = await closedOf(emulator.requests.at(-1)!);
    expect(closed).toBeDefined();
    expect(closed!.eventsSent).toBeGreaterThan(0);
    expect(closed!.eventsSent).toBeLessThan(closed!.events);
    expect(deltas.length).toBeLessThan(20);
  });

  it('a reply read to its end, or one the emulator drops itself (a streaming fault), records no client close', async () => {
    const [model, adapter] = adapters['openai-chat']();
    await adapter.send(streamed(adapter, model));
    const whole = emulator.requests.at(-1)!;
    emulator.setStreamingFault({ kind: 'break', afterEvents: 2, times: 1 });
    await expect(adapter.send(streamed(adapter, model))).rejects.toBeInstanceOf(ProviderError);
    const dropped = emulator.requests.at(-1)!;
    await new Promise((r) => setTimeout(r, 100)); // the close has come and gone (nothing to wait for: it must not be recorded)
    expect(whole.clientClosed).toBeUndefined();
    expect(dropped.clientClosed).toBeUndefined();
  });
});
