import { GeminiAdapter, OpenAIChatAdapter, OpenAIResponsesAdapter } from '../../providers';
import { ProviderEmulator } from '..';
import type { ChatMessage } from '../../providers';
import { storyTurns as turn } from './long-story';

describe('emulated prompt caching, reported in the real usage fields', () => {
  const emulator = new ProviderEmulator();
  beforeAll(() => emulator.start());
  afterAll(() => emulator.stop());

  it('OpenAI: automatic from 1024 tokens, in 128-token steps, keyed by prompt_cache_key', async () => {
    for (const adapter of [
      new OpenAIChatAdapter({ apiKey: 'k', baseURL: emulator.openAIBaseURL }),
      new OpenAIResponsesAdapter({ apiKey: 'k', baseURL: emulator.openAIBaseURL }),
    ]) {
      const key = `key-${adapter.protocol}`;
      const first = await adapter.send(adapter.buildRequest({ model: 'gpt-4.1', messages: turn(1), cacheKey: key }));
      expect(first.usage.cachedInputTokens).toBe(0);
      const second = await adapter.send(adapter.buildRequest({ model: 'gpt-4.1', messages: turn(2), cacheKey: key }));
      expect(second.usage.cachedInputTokens).toBeGreaterThanOrEqual(1024);
      expect((second.usage.cachedInputTokens - 1024) % 128).toBe(0);
      expect(second.usage.cachedInputTokens).toBeLessThanOrEqual(second.usage.inputTokens);
      const otherKey = await adapter.send(adapter.buildRequest({ model: 'gpt-4.1', messages: turn(2), cacheKey: `${key}-other` }));
      expect(otherKey.usage.cachedInputTokens).toBe(0);
    }
  });

  it('OpenAI: a prompt under 1024 tokens is never cached', async () => {
    const adapter = new OpenAIChatAdapter({ apiKey: 'k', baseURL: emulator.openAIBaseURL });
    const short: ChatMessage[] = [{ role: 'user', content: 'hello' }];
    await adapter.send(adapter.buildRequest({ model: 'gpt-4.1', messages: short, cacheKey: 'short' }));
    expect((await adapter.send(adapter.buildRequest({ model: 'gpt-4.1', messages: short, cacheKey: 'short' }))).usage.cachedInputTokens).toBe(0);
  });

  it('Gemini: implicit caching of the shared prefix (cachedContentTokenCount)', async () => {
    const adapter = new GeminiAdapter({ apiKey: 'k', baseURL: emulator.geminiBaseURL });
    await adapter.send(adapter.buildRequest({ model: 'gemini-2.5-flash', messages: turn(1) }));
    const second = await adapter.send(adapter.buildRequest({ model: 'gemini-2.5-flash', messages: turn(2) }));
    expect(second.usage.cachedInputTokens).toBeGreaterThan(1024);
  });
});
