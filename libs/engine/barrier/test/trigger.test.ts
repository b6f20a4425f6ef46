import { parseLlmConfig } from '../../../providers';
import { summaryCall, summaryFinish } from '../summary-model';
import { COMPACTION_TRIGGER_SHARE, compactionWindows, estimateRequestTokens, inputWindow, requestTokensOver } from '../trigger';

const slots = (story: [number, number], fast: [number, number]) =>
  parseLlmConfig(`
[slots.story]
protocol = "anthropic"
model = "claude-sonnet-4-5"
contextWindow = ${story[0]}
maxOutputTokens = ${story[1]}

[slots.fast]
protocol = "openai-chat"
model = "gpt-4.1-nano"
contextWindow = ${fast[0]}
maxOutputTokens = ${fast[1]}
`);

describe('the compaction trigger and the summary call', () => {
  it('the trigger window is the smaller input window of the story and the fast slot, each after its response reserve', () => {
    expect(inputWindow({ contextWindow: 8192, maxOutputTokens: 1024 })).toBe(7168);
    expect(compactionWindows({ config: slots([200_000, 8_000], [16_000, 2_000]) })).toEqual({
      effective: 14_000,
      fastInput: 14_000,
      threshold: Math.floor(14_000 * COMPACTION_TRIGGER_SHARE),
    });
    expect(compactionWindows({ config: slots([8_192, 1_024], [128_000, 512]) })).toMatchObject({ effective: 7_168, fastInput: 127_488 });
  });

  it('the estimate counts every message and the tool definitions (CJK one token a character)', () => {
    const messages = [
      { role: 'system' as const, content: 'a'.repeat(400) },
      { role: 'user' as const, content: '你好世界' },
    ];
    expect(estimateRequestTokens({ messages })).toBe(104);
    const tools = [{ name: 'note', description: 'x', parameters: {} }];
    expect(estimateRequestTokens({ messages, tools })).toBeGreaterThan(104);
    // an inline image counts 1,500 tokens whatever its size (spec §1 "Images that have been shown")
    const image = { mimeType: 'image/png' as const, data: 'iVBORw0KGgo=' };
    const shown = [...messages, { role: 'user' as const, content: 'pictures', images: [image, image] }];
    expect(estimateRequestTokens({ messages: shown })).toBe(104 + 2 + 2 * 1_500);
  });

  it('the barrier decides as the estimate does, and under the threshold by the lengths alone (no character counted)', () => {
    const image = { mimeType: 'image/png' as const, data: 'iVBORw0KGgo=' };
    const texts = ['a'.repeat(400), '你好世界', '𠮷😀'.repeat(50), '\ud800x\udc00', '', '👨‍👩‍👧 and 中文 mixed'];
    const calls = [
      ...texts.map((t) => ({ messages: [{ role: 'system' as const, content: t }] })),
      { messages: texts.map((t) => ({ role: 'user' as const, content: t })) },
      { messages: [{ role: 'user' as const, content: texts[2], images: [image] }], tools: [{ name: 'note', description: '笔记', parameters: {} }] },
    ];
    for (const call of calls) {
      const estimate = estimateRequestTokens(call);
      for (const threshold of [0, 1, estimate - 1, estimate, estimate + 1, 2 * estimate, 10_000]) {
        const decided = requestTokensOver(call, threshold);
        expect(decided.over).toBe(estimate > threshold);
        if (decided.over) expect(decided.tokens).toBe(estimate);
        // a bound: never under the estimate, never over the threshold
        else expect(decided.tokens).toBeGreaterThanOrEqual(estimate);
        if (!decided.over) expect(decided.tokens).toBeLessThanOrEqual(threshold);
      }
    }
    // 400 Latin letters are 100 tokens: under a threshold of 1,000 the answer is their length, not their count
    expect(requestTokensOver({ messages: [{ role: 'user', content: 'a'.repeat(400) }] }, 1_000)).toEqual({ over: false, tokens: 400 });
    expect(requestTokensOver({ messages: [{ role: 'user', content: 'a'.repeat(400) }] }, 399)).toEqual({ over: false, tokens: 100 });
  });

  it("a reply cut at its output limit is 'length' on every protocol", () => {
    for (const r of ['length', 'max_tokens', 'MAX_TOKENS', 'max_output_tokens']) expect(summaryFinish(r)).toBe('length');
    for (const r of ['stop', 'end_turn', 'STOP', 'stop_sequence']) expect(summaryFinish(r)).toBe('stop');
    expect(summaryFinish(null)).toBe('other');
    expect(summaryFinish('content_filter')).toBe('other');
  });

  it("the summary call is the provider's system text and prompt, unstreamed, its output capped by the slot's", () => {
    const slot = slots([8_192, 1_024], [8_192, 512]).slots.fast;
    expect(summaryCall({ system: 'S', prompt: 'P', maxOutputTokens: 2_000 }, { slot, overrides: {} })).toEqual({
      model: 'gpt-4.1-nano',
      messages: [
        { role: 'system', content: 'S' },
        { role: 'user', content: 'P' },
      ],
      maxOutputTokens: 512,
      stream: false,
      cacheBoundaries: true,
    });
  });
});
