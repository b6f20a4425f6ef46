import { AnthropicAdapter, GeminiAdapter, OpenAIChatAdapter, OpenAIResponsesAdapter, ProviderError } from '..';
import type { ModelCall, ProviderAdapter } from '..';
import { ProviderEmulator } from '../../emulator';

/**
 * A streamed call that fails where the same request without streaming may not is marked on its
 * ProviderError (`stream`), on every protocol: the provider refused streaming (`refused`), or the
 * stream opened and broke before any text delta (`broken`). The engine then sends the step once
 * more without streaming; any other failure is not marked.
 */
describe('streamed calls: which failures a call without streaming may not have', () => {
  const emulator = new ProviderEmulator();
  beforeAll(() => emulator.start());
  afterAll(() => emulator.stop());
  afterEach(() => emulator.setStreamingFault(null));

  const protocols: [string, string, (e: ProviderEmulator) => ProviderAdapter][] = [
    ['OpenAI Chat', 'gpt-4.1-mini', (e) => new OpenAIChatAdapter({ apiKey: 'k', baseURL: e.openAIBaseURL, maxRetries: 2 })],
    ['OpenAI Responses', 'gpt-4.1-mini', (e) => new OpenAIResponsesAdapter({ apiKey: 'k', baseURL: e.openAIBaseURL, maxRetries: 2 })],
    ['Anthropic', 'claude-sonnet-4-5', (e) => new AnthropicAdapter({ apiKey: 'k', baseURL: e.anthropicBaseURL, maxRetries: 2 })],
    ['Gemini', 'gemini-2.5-flash', (e) => new GeminiAdapter({ apiKey: 'k', baseURL: e.geminiBaseURL, maxAttempts: 3 })],
  ];
  const story = (model: string, stream: boolean): ModelCall => ({
    model,
    messages: [
      { role: 'system', content: 'You are the narrator.' },
      { role: 'user', content: 'The caravan reaches the salt flats at dusk and the guide refuses to go further.' },
    ],
    stream,
  });
  const failure = (promise: Promise<unknown>) =>
    promise.then(
      () => {
        throw new Error('the call succeeded');
      },
      (error: unknown) => error as ProviderError,
    );

  describe.each(protocols)('%s', (_name, model, make) => {
    let adapter: ProviderAdapter;
    beforeAll(() => {
      adapter = make(emulator);
    });

    it('a provider that refuses streaming: a 400 marked `refused` (not retried); the request without streaming goes through', async () => {
      emulator.setStreamingFault({ kind: 'refuse' });
      const from = emulator.requests.length;
      const error = await failure(adapter.send(adapter.buildRequest(story(model, true))));
      expect(error).toBeInstanceOf(ProviderError);
      expect(error).toMatchObject({ status: 400, retryable: false, stream: 'refused' });
      expect(emulator.requests.length - from).toBe(1);
      const reply = await adapter.send(adapter.buildRequest(story(model, false)));
      expect(reply.text).not.toBe('');
    });

    it('a stream that breaks before any event: marked `broken` (retryable)', async () => {
      emulator.setStreamingFault({ kind: 'break' });
      const error = await failure(adapter.send(adapter.buildRequest(story(model, true))));
      expect(error).toBeInstanceOf(ProviderError);
      expect(error).toMatchObject({ status: null, retryable: true, stream: 'broken' });
    });

    it('a stream that breaks after text deltas arrived: not marked (streaming works; an ordinary retryable failure)', async () => {
      emulator.setStreamingFault({ kind: 'break', afterEvents: 8 });
      const deltas: string[] = [];
      const error = await failure(adapter.send(adapter.buildRequest(story(model, true)), { onText: (d) => deltas.push(d) }));
      expect(deltas.length).toBeGreaterThan(0);
      expect(error).toMatchObject({ retryable: true, stream: undefined });
    });

    it('an ordinary error of a streamed call is not marked; a call the caller aborted is not either', async () => {
      emulator.injectFault({ status: 400, times: 1, message: 'messages: too long' });
      expect(await failure(adapter.send(adapter.buildRequest(story(model, true))))).toMatchObject({ status: 400, stream: undefined });
      emulator.setStreamingFault({ kind: 'break' });
      const aborted = new AbortController();
      aborted.abort();
      expect(await failure(adapter.send(adapter.buildRequest(story(model, true)), { signal: aborted.signal }))).toMatchObject({ stream: undefined });
    });

    it('the fault meets streamed requests only, `times` of them', async () => {
      emulator.setStreamingFault({ kind: 'refuse', times: 1 });
      await expect(adapter.send(adapter.buildRequest(story(model, false)))).resolves.toBeDefined();
      await expect(adapter.send(adapter.buildRequest(story(model, true)))).rejects.toMatchObject({ stream: 'refused' });
      await expect(adapter.send(adapter.buildRequest(story(model, true)))).resolves.toMatchObject({ text: expect.any(String) });
    });
  });

  it("the refusal is the provider's error shape (OpenAI: param stream, code unsupported_value)", async () => {
    emulator.setStreamingFault({ kind: 'refuse' });
    const r = await fetch(`${emulator.openAIBaseURL}/chat/completions`, {
      method: 'POST',
      body: JSON.stringify({ model: 'o3', messages: [{ role: 'user', content: 'hi' }], stream: true }),
    });
    expect(r.status).toBe(400);
    expect(await r.json()).toEqual({
      error: {
        message: expect.stringMatching(/^Your organization must be verified to stream this model/),
        type: 'invalid_request_error',
        param: 'stream',
        code: 'unsupported_value',
      },
    });
  });
});
