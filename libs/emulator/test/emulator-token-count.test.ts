import { OpenAIChatAdapter, type ChatMessage } from '../../providers';
import { estimateTokens } from '../../text';
import { ProviderEmulator } from '..';

/**
 * The emulator counts tokens with the spec's estimate (libs/text), the same the prefix bound and
 * the budget use: its usage and cache figures are in the unit the engine's reports compare them to.
 */
describe('emulated usage counts with the spec’s estimate', () => {
  const emulator = new ProviderEmulator();
  beforeAll(() => emulator.start());
  afterAll(() => emulator.stop());
  const inputTokens = async (content: string) => {
    const adapter = new OpenAIChatAdapter({ apiKey: 'k', baseURL: emulator.openAIBaseURL });
    const messages: ChatMessage[] = [{ role: 'user', content }];
    return (await adapter.send(adapter.buildRequest({ model: 'gpt-4.1', messages }))).usage.inputTokens;
  };

  it('fullwidth punctuation, astral ideographs, kana supplement and conjoining Jamo are one token each, as the estimate counts them', async () => {
    const latin = await inputTokens('x'.repeat(400));
    for (const cjk of ['，', '！', '𠮷', '\u{1b001}', '\u1100']) {
      const text = cjk.repeat(400);
      expect(estimateTokens(text)).toBe(400);
      // the same request with 400 CJK characters instead of 400 Latin letters: 400 tokens instead of 100
      expect((await inputTokens(text)) - latin).toBe(300);
    }
  });

  it('English text counts as before: one token per four characters', async () => {
    const short = await inputTokens('');
    expect((await inputTokens('The ember road winds past the sleeping dragon. '.repeat(40))) - short).toBe(Math.ceil((47 * 40) / 4));
  });
});
