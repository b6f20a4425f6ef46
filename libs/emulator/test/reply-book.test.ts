import { replyBookScript } from '..';
import type { ScriptedCall } from '..';

const TOOLS = [
  { name: 'update-dimensions', parameters: { type: 'object' } },
  { name: 'remember', parameters: { type: 'object' } },
];

const call = (over: Partial<ScriptedCall>): ScriptedCall =>
  ({
    transcript: [
      { role: 'system', content: 'rules' },
      { role: 'user', content: 'I ring the BELL three times' },
    ],
    tools: TOOLS,
    toolChoice: 'required',
    afterToolResult: false,
    toolResults: 0,
    ...over,
  }) as ScriptedCall;

describe("a world's reply book for the offline emulator", () => {
  const script = replyBookScript([
    { tool: 'update-dimensions', whenPlayerSays: ['bell', 'tremor'], args: { updates: [{ id: 'dragon-sleep', value: 7 }] } },
    { tool: 'remember', whenPlayerSays: ['bell'], args: { text: 'the bell rang' } },
  ])!;

  it('answers with the first rule whose tool is offered and whose words the last user message holds (case-insensitive)', () => {
    expect(script(call({}))).toEqual({ kind: 'tool', name: 'update-dimensions', args: { updates: [{ id: 'dragon-sleep', value: 7 }] } });
    // a named tool choice only takes a rule for that tool
    expect(script(call({ toolChoice: 'remember' }))).toEqual({ kind: 'tool', name: 'remember', args: { text: 'the bell rang' } });
    expect(script(call({ tools: [TOOLS[1]] }))).toMatchObject({ name: 'remember' });
  });

  it('leaves the call to the emulator when no words match, the tool is not offered, tools are off, or a tool result came back', () => {
    expect(script(call({ transcript: [{ role: 'user', content: 'I walk to the river' }] }))).toBeUndefined();
    expect(script(call({ tools: [{ name: 'other', parameters: {} }] }))).toBeUndefined();
    expect(script(call({ toolChoice: 'none' }))).toBeUndefined();
    expect(script(call({ afterToolResult: true }))).toBeUndefined();
    // only the last user message counts (an earlier turn's words are not this turn's)
    expect(
      script(
        call({
          transcript: [
            { role: 'user', content: 'the bell' },
            { role: 'assistant', content: 'ok' },
            { role: 'user', content: 'I sit' },
          ],
        }),
      ),
    ).toBeUndefined();
  });

  it('no rules: no script', () => {
    expect(replyBookScript([])).toBeUndefined();
  });
});
