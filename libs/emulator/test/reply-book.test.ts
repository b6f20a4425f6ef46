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

  it("after the narrative, a bookkeeper's request ends with the fixed ending hint: the player's words after the turn context count", () => {
    const transcript = [
      { role: 'system', content: 'rules' },
      { role: 'user', content: 'an earlier turn: the bell' },
      { role: 'assistant', content: 'earlier story' },
      { role: 'system', content: '<dimension-values>…</dimension-values>' },
      { role: 'user', content: 'I listen for the BELL' },
      { role: 'assistant', content: 'The bell rings.' },
      { role: 'user', content: 'The story text above was written in this turn. The plot stops at its end.' },
      // a lorebook entry inserted at depth 0 after it
      { role: 'system', content: 'Blue smoke from the vents means the dragon dreams.' },
    ];
    expect(script(call({ transcript }))).toMatchObject({ name: 'update-dimensions' });
    // an earlier turn's words, before the turn context, do not count
    expect(script(call({ transcript: [...transcript.slice(0, 4), { role: 'user', content: 'I sit' }] }))).toBeUndefined();
  });

  it('no rules: no script', () => {
    expect(replyBookScript([])).toBeUndefined();
  });
});
