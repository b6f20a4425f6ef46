import { ProviderEmulator } from '..';

/** The emulator refuses, in each wire format and with the provider's message, what the provider refuses in a tool loop. */
describe('emulator tool-loop strictness (raw wire requests)', () => {
  const emulator = new ProviderEmulator();
  beforeAll(() => emulator.start());
  afterAll(() => emulator.stop());

  const post = async (path: string, body: unknown) => {
    const r = await fetch(`${emulator.url}${path}`, { method: 'POST', body: JSON.stringify(body) });
    return { status: r.status, body: (await r.json()) as { error: { message: string } } };
  };
  const tool = { type: 'function', function: { name: 'roll', parameters: { type: 'object' } } };
  const call = { id: 'call_1', type: 'function', function: { name: 'roll', arguments: '{}' } };

  it.each<[string, unknown[], number, RegExp]>([
    [
      'a tool message with no call before it',
      [
        { role: 'user', content: 'hi' },
        { role: 'tool', tool_call_id: 'call_1', content: 'x' },
      ],
      400,
      /must be a response to a preceeding message with 'tool_calls'/,
    ],
    [
      'a tool message for another call id',
      [
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: null, tool_calls: [call] },
        { role: 'tool', tool_call_id: 'call_2', content: 'x' },
      ],
      400,
      /'tool_call_id' of 'call_2' not found/,
    ],
    [
      'a tool call left unanswered',
      [
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: null, tool_calls: [call] },
        { role: 'user', content: 'go on' },
      ],
      400,
      /did not have response messages: call_1/,
    ],
    [
      'a call answered',
      [
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: null, tool_calls: [call] },
        { role: 'tool', tool_call_id: 'call_1', content: 'x' },
      ],
      200,
      /./,
    ],
  ])('Chat: %s', async (_name, messages, status, message) => {
    const r = await post('/v1/chat/completions', { model: 'gpt-4.1', messages, tools: [tool] });
    expect(r.status).toBe(status);
    if (status !== 200) expect(r.body.error.message).toMatch(message);
  });

  it('Chat (DeepSeek thinking): a tool-calling assistant message of the current turn needs its reasoning_content', async () => {
    const messages = [
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: null, tool_calls: [call] },
      { role: 'tool', tool_call_id: 'call_1', content: 'x' },
    ];
    const missing = await post('/v1/chat/completions', { model: 'deepseek-v4', messages, tools: [tool] });
    expect([missing.status, missing.body.error.message]).toEqual([
      400,
      expect.stringMatching(/^Missing `reasoning_content` field in the assistant message at message index 1/),
    ]);
    const off = await post('/v1/chat/completions', { model: 'deepseek-v4', messages, tools: [tool], thinking: { type: 'disabled' } });
    expect(off.status).toBe(200);
  });

  it.each<[string, unknown[], RegExp]>([
    [
      'a function_call_output without its call',
      [
        { role: 'user', content: 'hi' },
        { type: 'function_call_output', call_id: 'call_1', output: 'x' },
      ],
      /No tool call found for function call output with call_id call_1/,
    ],
    [
      'a function_call without its output',
      [
        { role: 'user', content: 'hi' },
        { type: 'function_call', call_id: 'call_1', name: 'roll', arguments: '{}' },
        { role: 'user', content: 'go on' },
      ],
      /No tool output found for function call call_1/,
    ],
    [
      'a reasoning item after its function call',
      [
        { role: 'user', content: 'hi' },
        { type: 'function_call', call_id: 'call_1', name: 'roll', arguments: '{}' },
        { type: 'reasoning', id: 'rs_1', summary: [] },
        { type: 'function_call_output', call_id: 'call_1', output: 'x' },
      ],
      /Item 'rs_1' of type 'reasoning' was provided without its required following item/,
    ],
  ])('Responses: %s', async (_name, input, message) => {
    const r = await post('/v1/responses', { model: 'gpt-4.1', input });
    expect([r.status, r.body.error.message]).toEqual([400, expect.stringMatching(message)]);
  });

  it('Anthropic: thinking may not be combined with a forced tool; with thinking on, the final assistant turn must start with thinking', async () => {
    const base = {
      model: 'claude-sonnet-4-5',
      max_tokens: 2000,
      thinking: { type: 'enabled', budget_tokens: 1024 },
      tools: [{ name: 'roll', input_schema: { type: 'object' } }],
    };
    const forced = await post('/v1/messages', { ...base, tool_choice: { type: 'any' }, messages: [{ role: 'user', content: 'hi' }] });
    expect([forced.status, forced.body.error.message]).toEqual([400, 'Thinking may not be enabled when tool_choice forces tool use.']);
    const bare = await post('/v1/messages', {
      ...base,
      messages: [
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'roll', input: {} }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'x' }] },
      ],
    });
    expect([bare.status, bare.body.error.message]).toEqual([
      400,
      expect.stringMatching(/^messages\.1\.content\.0\.type: Expected `thinking` or `redacted_thinking`, but found `tool_use`/),
    ]);
    const unanswered = await post('/v1/messages', {
      ...base,
      thinking: undefined,
      messages: [
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'roll', input: {} }] },
        { role: 'user', content: 'go on' },
      ],
    });
    expect(unanswered.body.error.message).toMatch(/^messages\.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_1/);
  });

  it.each<[string, Record<string, unknown>, string]>([
    [
      'a budget not under max_tokens',
      { max_tokens: 4096, thinking: { type: 'enabled', budget_tokens: 4096 } },
      '`max_tokens` must be greater than `thinking.budget_tokens`.',
    ],
    [
      'a budget under 1024',
      { max_tokens: 4096, thinking: { type: 'enabled', budget_tokens: 512 } },
      'thinking.enabled.budget_tokens: Input should be greater than or equal to 1024',
    ],
    ['no budget', { max_tokens: 4096, thinking: { type: 'enabled' } }, 'thinking.enabled.budget_tokens: Field required'],
    ['a temperature other than 1', { temperature: 0.7 }, '`temperature` may only be set to 1 when thinking is enabled.'],
    ['top_k', { top_k: 40 }, '`top_k` must be unset when thinking is enabled.'],
    ['top_p under 0.95', { top_p: 0.9 }, '`top_p` must be greater than or equal to 0.95 or unset when thinking is enabled.'],
    [
      'a named tool choice',
      { tools: [{ name: 'roll', input_schema: { type: 'object' } }], tool_choice: { type: 'tool', name: 'roll' } },
      'Thinking may not be enabled when tool_choice forces tool use.',
    ],
  ])("Anthropic with thinking enabled rejects %s (400 invalid_request_error, the API's shape)", async (_name, over, message) => {
    const body = {
      model: 'claude-sonnet-4-5',
      max_tokens: 2048,
      thinking: { type: 'enabled', budget_tokens: 1024 },
      messages: [{ role: 'user', content: 'hi' }],
      ...over,
    };
    const r = await fetch(`${emulator.url}/v1/messages`, { method: 'POST', body: JSON.stringify(body) });
    expect(r.status).toBe(400);
    const error = (await r.json()) as { type: string; error: { type: string; message: string }; request_id: string };
    expect(error).toEqual({
      type: 'error',
      error: { type: 'invalid_request_error', message: expect.stringContaining(message) },
      request_id: expect.stringMatching(/^req_/),
    });
    // the same request without thinking is accepted; with temperature 1 / top_p 0.95 too
    const { thinking: _t, ...plain } = body;
    expect((await post('/v1/messages', plain)).status).toBe(200);
  });

  it('Anthropic with thinking enabled accepts temperature 1, top_p 0.95 and a budget one under max_tokens', async () => {
    const body = {
      model: 'claude-sonnet-4-5',
      max_tokens: 1025,
      thinking: { type: 'enabled', budget_tokens: 1024 },
      temperature: 1,
      top_p: 0.95,
      messages: [{ role: 'user', content: 'hi' }],
    };
    expect((await post('/v1/messages', body)).status).toBe(200);
  });

  it('Gemini: function responses must answer the calls of the model turn before them, one for one', async () => {
    const contents = [
      { role: 'user', parts: [{ text: 'hi' }] },
      { role: 'model', parts: [{ functionCall: { name: 'roll', args: {} } }] },
      { role: 'user', parts: [{ functionResponse: { name: 'roll', response: {} } }, { functionResponse: { name: 'roll', response: {} } }] },
    ];
    const r = await post('/v1beta/models/gemini-2.5-flash:generateContent', { contents });
    expect([r.status, r.body.error.message]).toEqual([
      400,
      expect.stringMatching(/number of function response parts is equal to the number of function call parts/),
    ]);
    const ok = await post('/v1beta/models/gemini-2.5-flash:generateContent', {
      contents: [...contents.slice(0, 2), { role: 'user', parts: [contents[2].parts[0]] }],
    });
    expect(ok.status).toBe(200);
  });
});
