import { OpenAIChatAdapter, OpenAIResponsesAdapter } from '..';
import type { ChatMessage } from '..';

const history: ChatMessage[] = [
  { role: 'system', content: 'You are the narrator.\uE000' },
  { role: 'user', content: 'input 1' },
  { role: 'assistant', content: 'story 1' },
];
const turn = (data: string): ChatMessage[] => [
  ...history,
  { role: 'system', content: `<runtime-inputs>${data}</runtime-inputs>` },
  { role: 'user', content: 'input 2' },
];

/** The serialized request up to the end of the history (what the provider's cache key hashes first). */
const upToHistory = (body: Record<string, unknown>, key: 'messages' | 'input') => {
  const items = body[key] as unknown[];
  const text = JSON.stringify(body);
  const cut = JSON.stringify(items.slice(0, key === 'messages' ? 3 : 2)).slice(0, -1);
  return text.slice(0, text.indexOf(cut) + cut.length);
};

describe('§2 late system messages on the OpenAI protocols', () => {
  it('lateSystemAsUser = true: two requests that differ only in the turn context are byte-identical up to the end of the history', () => {
    const chat = new OpenAIChatAdapter({ apiKey: 'k', lateSystemAsUser: true });
    const a = chat.buildRequest({ model: 'gpt-4.1', messages: turn('A') });
    const b = chat.buildRequest({ model: 'gpt-4.1', messages: turn('B') });
    expect(JSON.stringify(a)).not.toBe(JSON.stringify(b));
    expect(upToHistory(a, 'messages')).toBe(upToHistory(b, 'messages'));
    expect(JSON.stringify(b).startsWith(upToHistory(a, 'messages'))).toBe(true);
    expect((a.messages as { role: string; content: string }[])[3]).toEqual({
      role: 'user',
      content: '<system-instruction>\n<runtime-inputs>A</runtime-inputs>\n</system-instruction>',
    });

    const responses = new OpenAIResponsesAdapter({ apiKey: 'k', lateSystemAsUser: true });
    const ra = responses.buildRequest({ model: 'gpt-4.1', messages: turn('A') });
    const rb = responses.buildRequest({ model: 'gpt-4.1', messages: turn('B') });
    expect(upToHistory(ra, 'input')).toBe(upToHistory(rb, 'input'));
    expect((ra.input as { role: string }[])[2].role).toBe('user');
  });

  it('by default the roles are unchanged (system stays system) and the sentinel is stripped', () => {
    const body = new OpenAIChatAdapter({ apiKey: 'k' }).buildRequest({ model: 'gpt-4.1', messages: turn('A') });
    expect((body.messages as { role: string }[]).map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'system', 'user']);
    expect(JSON.stringify(body)).not.toContain('\uE000');
    const r = new OpenAIResponsesAdapter({ apiKey: 'k' }).buildRequest({ model: 'gpt-4.1', messages: turn('A') });
    expect(r.instructions).toBe('You are the narrator.');
    expect((r.input as { role: string }[]).map((m) => m.role)).toEqual(['user', 'assistant', 'system', 'user']);
  });

  it('both OpenAI protocols send the prompt_cache_key they are given', () => {
    for (const a of [new OpenAIChatAdapter({ apiKey: 'k' }), new OpenAIResponsesAdapter({ apiKey: 'k' })]) {
      expect(a.buildRequest({ model: 'gpt-4.1', messages: turn('A'), cacheKey: 'covel-abc' }).prompt_cache_key).toBe('covel-abc');
    }
  });
});
