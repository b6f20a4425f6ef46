import { GeminiAdapter } from '..';
import { ProviderEmulator } from '../../emulator';
import type { ChatMessage } from '..';

const call = { id: 'c1', name: 'record_fact', arguments: { fact: 'door' } };
const messages: ChatMessage[] = [
  { role: 'system', content: 'You are the narrator.\uE000\n\nRules.' },
  { role: 'user', content: 'input 1' },
  { role: 'assistant', content: 'story 1' },
  { role: 'system', content: 'turn data' },
  { role: 'user', content: 'input 2' },
  { role: 'assistant', content: '', toolCalls: [call] },
  { role: 'system', content: 'between call and response' },
  { role: 'tool', content: '{"ok":true}', toolCallId: 'c1', toolName: 'record_fact' },
  { role: 'user', content: 'and then?' },
];

type Content = { role: string; parts: Record<string, unknown>[] };

describe('§2 how the Gemini native protocol sends late system messages', () => {
  const adapter = new GeminiAdapter({ apiKey: 'k' });

  it('prefix: only the leading system message goes into systemInstruction, later ones stay in place as user text', () => {
    const body = adapter.buildRequest({ model: 'gemini-2.5-flash', messages: messages.slice(0, 5) });
    expect(body.systemInstruction).toEqual({ parts: [{ text: 'You are the narrator.\n\nRules.' }] });
    const contents = body.contents as Content[];
    expect(contents.map((c) => c.role)).toEqual(['user', 'model', 'user']);
    expect(contents[2].parts).toEqual([{ text: '<system-instruction>\nturn data\n</system-instruction>' }, { text: 'input 2' }]);
  });

  it('adjacent plain text of one role is merged; model content with a function call is not merged with what follows; a function response content holds only function responses', () => {
    const contents = adapter.buildRequest({ model: 'gemini-2.5-flash', messages }).contents as Content[];
    expect(contents.map((c) => [c.role, c.parts.map((p) => Object.keys(p)[0])])).toEqual([
      ['user', ['text']],
      ['model', ['text']],
      ['user', ['text', 'text']],
      ['model', ['functionCall']],
      ['user', ['functionResponse']], // right after its call
      ['user', ['text', 'text']], // the instruction that sat between them, then the player's text
    ]);
  });

  it('lateSystemAsUser = false restores the old shape: all system into systemInstruction, nothing merged', () => {
    const old = new GeminiAdapter({ apiKey: 'k', lateSystemAsUser: false });
    const body = old.buildRequest({ model: 'gemini-2.5-flash', messages: messages.slice(0, 5) });
    expect((body.systemInstruction as { parts: { text: string }[] }).parts[0].text).toBe('You are the narrator.\n\nRules.\n\nturn data');
    expect((body.contents as Content[]).map((c) => c.parts.length)).toEqual([1, 1, 1]);
  });

  it('the emulator rejects what Google rejects: a system role in contents, a function response not right after its call', async () => {
    const emulator = await new ProviderEmulator().start();
    try {
      const post = (body: unknown) => fetch(`${emulator.url}/v1beta/models/gemini-2.5-flash:generateContent`, { method: 'POST', body: JSON.stringify(body) });
      const system = await post({ contents: [{ role: 'system', parts: [{ text: 'x' }] }] });
      expect(system.status).toBe(400);
      expect(await system.json()).toMatchObject({
        error: { code: 400, status: 'INVALID_ARGUMENT', message: expect.stringMatching(/valid role: user, model/) },
      });
      const orphan = await post({
        contents: [
          { role: 'user', parts: [{ text: 'x' }] },
          { role: 'user', parts: [{ functionResponse: { name: 'f', response: {} } }] },
        ],
      });
      expect(orphan.status).toBe(400);
      expect(JSON.stringify(await orphan.json())).toMatch(/immediately after a function call/);
      // our shape for the full conversation is accepted as it is
      const ok = await post(adapter.buildRequest({ model: 'gemini-2.5-flash', messages }));
      expect(ok.status).toBe(200);
    } finally {
      await emulator.stop();
    }
  });
});
