import { AnthropicAdapter, GeminiAdapter, OpenAIChatAdapter, OpenAIResponsesAdapter, type ProviderAdapter } from '../../providers';
import { ProviderEmulator } from '..';
import { codePointLength, isWellFormedText } from '../../text';

/** The emulator echoes the player's words into its story text: its cut must keep them valid Unicode. */
describe('emulator story text with emoji, ZWJ sequences, CJK and RTL input', () => {
  const emulator = new ProviderEmulator();
  let adapters: [string, string, ProviderAdapter][];
  beforeAll(async () => {
    await emulator.start();
    adapters = [
      ['openai-chat', 'gpt-4.1-mini', new OpenAIChatAdapter({ apiKey: 'k', baseURL: emulator.openAIBaseURL, maxRetries: 0 })],
      ['openai-responses', 'gpt-4.1-mini', new OpenAIResponsesAdapter({ apiKey: 'k', baseURL: emulator.openAIBaseURL, maxRetries: 0 })],
      ['anthropic', 'claude-sonnet-4-5', new AnthropicAdapter({ apiKey: 'k', baseURL: emulator.anthropicBaseURL, maxRetries: 0 })],
      ['gemini', 'gemini-2.5-flash', new GeminiAdapter({ apiKey: 'k', baseURL: emulator.geminiBaseURL, maxAttempts: 1 })],
    ];
  });
  afterAll(() => emulator.stop());

  const say = async (adapter: ProviderAdapter, model: string, text: string, maxOutputTokens = 400) =>
    (
      await adapter.send(
        adapter.buildRequest({
          model,
          maxOutputTokens,
          messages: [
            { role: 'system', content: 'You are the narrator.' },
            { role: 'user', content: text },
          ],
        }),
      )
    ).text;

  const segmenter = new Intl.Segmenter('und', { granularity: 'grapheme' });
  const boundaries = (text: string) => new Set([...segmenter.segment(text)].map((s) => s.index).concat(text.length));
  const family = '👨‍👩‍👧‍👦';
  const inputs: Record<string, string> = {
    'x + 60 × 😀 (the 120-unit cut fell inside an emoji)': 'x' + '😀'.repeat(60) + 'abcdefghijklmnopqrstuvwxyz'.repeat(3),
    'x + 200 × 😀 (cut at 120 code points)': 'x' + '😀'.repeat(200),
    'ZWJ families across the cut': 'y' + family.repeat(30),
    'flags across the cut': 'z' + '🇯🇵'.repeat(70),
    'CJK across the cut': '龍'.repeat(130),
    'Arabic with harakat across the cut': 'مَرْحَبًا '.repeat(20),
    'Hebrew with niqqud across the cut': 'שָׁלוֹם '.repeat(30),
    'combining marks across the cut': 'e\u0301'.repeat(100),
  };

  it.each(Object.entries(inputs))('%s: every protocol answers well-formed text holding whole clusters of the input', async (_, input) => {
    for (const [protocol, model, adapter] of adapters) {
      const text = await say(adapter, model, input);
      expect([protocol, isWellFormedText(text)]).toEqual([protocol, true]);
      // the echoed part is a prefix of the input, cut at a cluster boundary, at most 120 code points
      const start = text.indexOf(' you ') + 5;
      const echoed = text.slice(start, text.indexOf('. ', start));
      const said = input.trim();
      expect(said.startsWith(echoed.trimEnd())).toBe(true);
      expect(boundaries(said).has(echoed.trimEnd().length)).toBe(true);
      expect(codePointLength(echoed)).toBeLessThanOrEqual(120);
      expect(codePointLength(echoed)).toBeGreaterThan(100);
    }
  });

  it('the whole input comes back when it has at most 120 code points (x + 80 × 😀 is 81)', async () => {
    const input = 'x' + '😀'.repeat(80);
    for (const [, model, adapter] of adapters) expect(await say(adapter, model, input)).toContain(`you ${input}.`);
  });

  it('a max_tokens cut (Chat) keeps whole emoji', async () => {
    const [, model, chat] = adapters[0];
    // one ASCII letter between emoji pairs: every alignment of the cut meets an emoji somewhere
    for (const input of ['x' + '😀'.repeat(80), 'x' + 'a😀😀'.repeat(30)]) {
      for (let limit = 10; limit <= 30; limit++) {
        const text = await say(chat, model, input, limit);
        expect([limit, isWellFormedText(text)]).toEqual([limit, true]);
        expect(codePointLength(text)).toBeLessThanOrEqual(limit * 4);
      }
    }
  });

  it('an astral capital letter is lowered whole', async () => {
    const [, model, chat] = adapters[0];
    expect(await say(chat, model, '𐐀 walks in')).toContain('you 𐐨 walks in.');
  });
});
