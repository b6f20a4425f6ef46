import { GeminiAdapter, OpenAIChatAdapter, OpenAIResponsesAdapter } from '../../providers';
import { AutomaticPrefixCache, automaticCacheText, OPENAI_PREFIX_CACHE, ProviderEmulator } from '..';
import { storyTurns as turn } from './long-story';

/**
 * The Emberback bench replays recorded request bodies through the emulator's cache model to find the
 * most a cache could read (its cache bound): that only means something if the replay sees the text, key
 * and token estimate the emulator billed with.
 */
describe('automaticCacheText: the text and key the emulated automatic caches compare', () => {
  const emulator = new ProviderEmulator();
  beforeAll(() => emulator.start());
  afterAll(() => emulator.stop());

  it('replaying the recorded requests with the same cache model gives the cached tokens the emulator reported; without minimum and steps, at least as many', async () => {
    const adapters = [
      { protocol: 'openai-chat', adapter: new OpenAIChatAdapter({ apiKey: 'k', baseURL: emulator.openAIBaseURL }), model: 'gpt-4.1' },
      { protocol: 'openai-responses', adapter: new OpenAIResponsesAdapter({ apiKey: 'k', baseURL: emulator.openAIBaseURL }), model: 'gpt-4.1' },
    ] as const;
    for (const { protocol, adapter, model } of adapters) {
      const replay = new AutomaticPrefixCache(OPENAI_PREFIX_CACHE);
      const exact = new AutomaticPrefixCache({ minTokens: 0, stepTokens: 1 });
      const from = emulator.requests.length;
      const usages: { inputTokens: number; cachedInputTokens: number }[] = [];
      for (const n of [1, 2, 3]) usages.push((await adapter.send(adapter.buildRequest({ model, messages: turn(n), cacheKey: `replay-${protocol}` }))).usage);
      const sent = emulator.requests.slice(from);
      expect(sent).toHaveLength(3);
      sent.forEach((r, i) => {
        const text = automaticCacheText(protocol, model, JSON.parse(r.raw) as Record<string, unknown>)!;
        expect(text.key).toBe(`${model}|replay-${protocol}`);
        const shared = exact.lookup(text.key, text.prompt);
        expect(replay.lookup(text.key, text.prompt)).toBe(usages[i].cachedInputTokens);
        expect(shared).toBeGreaterThanOrEqual(usages[i].cachedInputTokens);
        expect(shared).toBeLessThanOrEqual(usages[i].inputTokens);
      });
      expect(usages[2].cachedInputTokens).toBeGreaterThan(0);
    }
  });

  it('Gemini: the model from the URL is the key; Anthropic (breakpoints, no longest prefix): none', async () => {
    const adapter = new GeminiAdapter({ apiKey: 'k', baseURL: emulator.geminiBaseURL });
    const from = emulator.requests.length;
    await adapter.send(adapter.buildRequest({ model: 'gemini-2.5-flash', messages: turn(1) }));
    const [r] = emulator.requests.slice(from);
    expect(automaticCacheText('gemini', 'gemini-2.5-flash', JSON.parse(r.raw) as Record<string, unknown>)?.key).toBe('gemini-2.5-flash');
    expect(automaticCacheText('anthropic', 'claude-sonnet-4-5', { messages: [] })).toBeNull();
  });
});
