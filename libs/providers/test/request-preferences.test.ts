import { AnthropicAdapter, GeminiAdapter, OpenAIChatAdapter, OpenAIResponsesAdapter } from '..';
import { ProviderEmulator } from '../../emulator';
import type { ModelCall, ProviderAdapter } from '..';
import { weatherTool } from './adapter-contract';

const chat = new OpenAIChatAdapter({ apiKey: 'k' });
const responses = new OpenAIResponsesAdapter({ apiKey: 'k' });
const anthropic = new AnthropicAdapter({ apiKey: 'k' });
const gemini = new GeminiAdapter({ apiKey: 'k' });

const call = (model: string, over: Partial<ModelCall> = {}): ModelCall => ({
  model,
  messages: [{ role: 'user', content: 'hi' }],
  tools: [weatherTool],
  ...over,
});
const pick = (a: ProviderAdapter, c: ModelCall, ...keys: string[]) => {
  const body = a.buildRequest(c);
  return Object.fromEntries(keys.filter((k) => k in body).map((k) => [k, body[k]]));
};
const named = { toolChoice: { name: 'record_fact' } } as const;

describe('§3 request preferences: tool choice, per protocol', () => {
  it.each<[string, ProviderAdapter, string, Partial<ModelCall>, Record<string, unknown>]>([
    ['Chat: named tool', chat, 'gpt-4.1', { preferences: named }, { tool_choice: { type: 'function', function: { name: 'record_fact' } } }],
    ['Chat: required', chat, 'gpt-4.1', { preferences: { toolChoice: 'required' } }, { tool_choice: 'required' }],
    ['Chat: no preference → left out', chat, 'gpt-4.1', {}, {}],
    ['Responses: named tool', responses, 'gpt-4.1', { preferences: named }, { tool_choice: { type: 'function', name: 'record_fact' } }],
    ['Responses: required', responses, 'gpt-4.1', { preferences: { toolChoice: 'required' } }, { tool_choice: 'required' }],
    ['Anthropic: named tool', anthropic, 'claude-sonnet-4-5', { preferences: named }, { tool_choice: { type: 'tool', name: 'record_fact' } }],
    ['Anthropic: required → any', anthropic, 'claude-sonnet-4-5', { preferences: { toolChoice: 'required' } }, { tool_choice: { type: 'any' } }],
    [
      'Anthropic: explicit thinking → auto',
      anthropic,
      'claude-sonnet-4-5',
      { preferences: named, overrides: { reasoning: { enabled: true } } },
      { tool_choice: { type: 'auto' }, thinking: { type: 'enabled', budget_tokens: 2048 } },
    ],
    ['Claude Fable 5.1 rejects forced tools → auto', anthropic, 'claude-fable-5-1', { preferences: named }, { tool_choice: { type: 'auto' } }],
    ['Claude Mythos 5.1 → auto', anthropic, 'claude-mythos-5-1', { preferences: { toolChoice: 'required' } }, { tool_choice: { type: 'auto' } }],
    ['Claude Opus 5.5 → auto', anthropic, 'claude-opus-5-5', { preferences: named }, { tool_choice: { type: 'auto' } }],
    ['Claude Sonnet 5.5 → auto', anthropic, 'claude-sonnet-5-5', { preferences: named }, { tool_choice: { type: 'auto' } }],
    ['Qwen: named', chat, 'qwen3-32b', { preferences: named }, { tool_choice: { type: 'function', function: { name: 'record_fact' } } }],
    [
      'Qwen: explicit thinking → auto',
      chat,
      'qwen3-32b',
      { preferences: named, overrides: { reasoning: { enabled: true } } },
      { tool_choice: 'auto', enable_thinking: true },
    ],
    ['DeepSeek flash thinks by default: tool_choice left out', chat, 'deepseek-flash', { preferences: named }, {}],
    ['DeepSeek V4 thinks by default: left out', chat, 'deepseek-v4', { preferences: { toolChoice: 'required' } }, {}],
    [
      'DeepSeek explicit thinking on: left out',
      chat,
      'deepseek-chat',
      { preferences: named, overrides: { reasoning: { enabled: true } } },
      { thinking: { type: 'enabled' } },
    ],
    [
      'DeepSeek thinking explicitly off: preference kept',
      chat,
      'deepseek-flash',
      { preferences: named, overrides: { reasoning: { enabled: false } } },
      { tool_choice: { type: 'function', function: { name: 'record_fact' } }, thinking: { type: 'disabled' } },
    ],
    [
      'DeepSeek with agent.reasoning: false: off, preference kept',
      chat,
      'deepseek-v4',
      { preferences: { ...named, reasoning: false } },
      { tool_choice: { type: 'function', function: { name: 'record_fact' } }, thinking: { type: 'disabled' } },
    ],
    ['player auto is sent as is', chat, 'gpt-4.1', { preferences: named, overrides: { toolChoice: 'auto' } }, { tool_choice: 'auto' }],
    [
      "the player's forced choice with explicit Anthropic thinking → auto too (a 400 otherwise)",
      anthropic,
      'claude-sonnet-4-5',
      { overrides: { toolChoice: 'required', reasoning: { enabled: true } } },
      { tool_choice: { type: 'auto' }, thinking: { type: 'enabled', budget_tokens: 2048 } },
    ],
    [
      "the player's named tool on a Claude model that rejects forced tools → auto",
      anthropic,
      'claude-opus-5-5',
      { overrides: { toolChoice: { name: 'record_fact' } } },
      { tool_choice: { type: 'auto' } },
    ],
    ["the player's forced choice on a DeepSeek thinking model: left out", chat, 'deepseek-v4', { overrides: { toolChoice: 'required' } }, {}],
    ['player none is sent as is', anthropic, 'claude-sonnet-4-5', { preferences: named, overrides: { toolChoice: 'none' } }, { tool_choice: { type: 'none' } }],
    [
      'player slot override wins over the plugin preference',
      responses,
      'gpt-4.1',
      { preferences: named, overrides: { toolChoice: 'required' } },
      { tool_choice: 'required' },
    ],
  ])('%s', (_name, adapter, model, over, expected) => {
    expect(pick(adapter, call(model, over), 'tool_choice', 'enable_thinking', 'thinking')).toEqual(expected);
  });

  it('Gemini: named → ANY with allowedFunctionNames; required → ANY; player auto → AUTO', () => {
    expect(gemini.buildRequest(call('gemini-2.5-flash', { preferences: named })).toolConfig).toEqual({
      functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['record_fact'] },
    });
    expect(gemini.buildRequest(call('gemini-2.5-flash', { preferences: { toolChoice: 'required' } })).toolConfig).toEqual({
      functionCallingConfig: { mode: 'ANY' },
    });
    expect(gemini.buildRequest(call('gemini-2.5-flash', { preferences: named, overrides: { toolChoice: 'auto' } })).toolConfig).toEqual({
      functionCallingConfig: { mode: 'AUTO' },
    });
    expect(gemini.buildRequest(call('gemini-2.5-flash')).toolConfig).toBeUndefined();
  });
});

describe('§3 request preferences: agent.reasoning: false', () => {
  const off = { preferences: { reasoning: false as const } };
  it.each<[string, ProviderAdapter, string, Partial<ModelCall>, Record<string, unknown>]>([
    ['Qwen → enable_thinking: false', chat, 'qwen3-32b', off, { enable_thinking: false }],
    ['DeepSeek → thinking disabled', chat, 'deepseek-chat', off, { thinking: { type: 'disabled' } }],
    ['OpenAI reasoning model → minimal effort', chat, 'gpt-5-mini', off, { reasoning_effort: 'minimal' }],
    ['OpenAI Responses reasoning model → minimal effort', responses, 'gpt-5-mini', off, { reasoning: { effort: 'minimal' } }],
    ['Anthropic → thinking disabled', anthropic, 'claude-sonnet-4-5', off, { thinking: { type: 'disabled' } }],
    ['a model with no reasoning control keeps its capability (nothing sent)', chat, 'gpt-4.1', off, {}],
    [
      'an explicit reasoning setting wins: no off switch applied',
      chat,
      'qwen3-32b',
      { ...off, overrides: { reasoning: { enabled: true } } },
      { enable_thinking: true },
    ],
    [
      'an explicit Anthropic thinking setting gets a budget',
      anthropic,
      'claude-sonnet-4-5',
      { ...off, overrides: { reasoning: { enabled: true, effort: 'low' } } },
      { thinking: { type: 'enabled', budget_tokens: 1024 } },
    ],
  ])('%s', (_name, adapter, model, over, expected) => {
    expect(pick(adapter, call(model, { ...over, tools: undefined }), 'enable_thinking', 'thinking', 'reasoning_effort', 'reasoning')).toEqual(expected);
  });

  it('Gemini: flash can turn it off (budget 0); pro cannot, so nothing is sent', () => {
    expect(gemini.buildRequest(call('gemini-2.5-flash', off)).generationConfig).toEqual({ thinkingConfig: { thinkingBudget: 0 } });
    expect(gemini.buildRequest(call('gemini-2.5-pro', off)).generationConfig).toBeUndefined();
  });

  it('an explicit off on a model that cannot turn reasoning off sends nothing (Gemini pro would reject budget 0)', () => {
    const explicitOff = { overrides: { reasoning: { enabled: false } } };
    expect(gemini.buildRequest(call('gemini-2.5-pro', explicitOff)).generationConfig).toBeUndefined();
    expect(gemini.buildRequest(call('gemini-2.5-flash', explicitOff)).generationConfig).toEqual({ thinkingConfig: { thinkingBudget: 0 } });
    expect(anthropic.buildRequest(call('claude-sonnet-4-5', explicitOff)).thinking).toEqual({ type: 'disabled' });
  });

  it('the same preference is used for streaming and non-streaming requests', () => {
    const a = chat.buildRequest(call('qwen3-32b', { ...off, preferences: { ...off.preferences, ...named } }));
    const b = chat.buildRequest(call('qwen3-32b', { ...off, preferences: { ...off.preferences, ...named }, stream: true }));
    expect([a.tool_choice, a.enable_thinking]).toEqual([b.tool_choice, b.enable_thinking]);
  });
});

describe('§3 agent.reasoning: false — the off value per OpenAI model family, on both protocols, accepted by the emulator', () => {
  const emulator = new ProviderEmulator();
  let live: { chat: OpenAIChatAdapter; responses: OpenAIResponsesAdapter };
  beforeAll(async () => {
    await emulator.start();
    live = {
      chat: new OpenAIChatAdapter({ apiKey: 'k', baseURL: emulator.openAIBaseURL, maxRetries: 0 }),
      responses: new OpenAIResponsesAdapter({ apiKey: 'k', baseURL: emulator.openAIBaseURL, maxRetries: 0 }),
    };
  });
  afterAll(() => emulator.stop());

  const off = { preferences: { reasoning: false as const } };
  const effortOf = (protocol: 'chat' | 'responses', body: Record<string, unknown>) =>
    protocol === 'chat' ? body.reasoning_effort : (body.reasoning as { effort?: string } | undefined)?.effort;

  // undefined: the model cannot turn reasoning off (or has none): nothing is sent, it keeps its capability
  const families: [string, string, string | undefined][] = [
    ['gpt-5', 'gpt-5', 'minimal'],
    ['gpt-5 mini', 'gpt-5-mini', 'minimal'],
    ['gpt-5 nano (dated)', 'gpt-5-nano-2025-08-07', 'minimal'],
    ['gpt-5.1 (minimal is a 400 there)', 'gpt-5.1', 'none'],
    ['gpt-5.2', 'gpt-5.2', 'none'],
    ['o3 (cannot be turned off)', 'o3', undefined],
    ['o4-mini', 'o4-mini', undefined],
    ['gpt-5-codex', 'gpt-5-codex', undefined],
    ['gpt-5.1-codex', 'gpt-5.1-codex', undefined],
    ['gpt-5.1-codex-mini', 'gpt-5.1-codex-mini', undefined],
    ['gpt-5-pro', 'gpt-5-pro', undefined],
    ['gpt-4.1 (no reasoning)', 'gpt-4.1', undefined],
    ['an unknown OpenAI-compatible model', 'my-local-model', undefined],
  ];
  for (const protocol of ['chat', 'responses'] as const) {
    it.each(families)(`${protocol}: %s`, async (_name, model, expected) => {
      const adapter = live[protocol];
      const body = adapter.buildRequest(call(model, { ...off, tools: undefined }));
      expect(effortOf(protocol, body)).toBe(expected);
      if (expected === undefined) expect(protocol === 'chat' ? 'reasoning_effort' in body : 'reasoning' in body).toBe(false);
      // the emulator rejects what the real API rejects: the request must go through
      await expect(adapter.send(body)).resolves.toMatchObject({ finishReason: expect.any(String) });
    });
  }

  it.each<[string, string, Partial<ModelCall>, string | undefined]>([
    ['an explicit off on gpt-5.1 → none', 'gpt-5.1', { overrides: { reasoning: { enabled: false } } }, 'none'],
    ['an explicit off on o3 → nothing (it cannot be turned off)', 'o3', { overrides: { reasoning: { enabled: false } } }, undefined],
    ['an explicit effort on o3 wins over agent.reasoning: false', 'o3', { ...off, overrides: { reasoning: { enabled: true, effort: 'low' } } }, 'low'],
    ['an explicit effort on a codex model', 'gpt-5.1-codex', { overrides: { reasoning: { enabled: true } } }, 'medium'],
  ])('%s', async (_name, model, over, expected) => {
    for (const protocol of ['chat', 'responses'] as const) {
      const body = live[protocol].buildRequest(call(model, { ...over, tools: undefined }));
      expect(effortOf(protocol, body)).toBe(expected);
      await expect(live[protocol].send(body)).resolves.toBeDefined();
    }
  });

  it.each<[string, string, string, string]>([
    [
      'minimal on gpt-5.1',
      'gpt-5.1',
      'minimal',
      "Unsupported value: 'minimal' is not supported with the 'gpt-5.1' model. Supported values are: 'none', 'low', 'medium', and 'high'.",
    ],
    [
      'minimal on gpt-5.2',
      'gpt-5.2',
      'minimal',
      "Unsupported value: 'minimal' is not supported with the 'gpt-5.2' model. Supported values are: 'none', 'low', 'medium', 'high', and 'xhigh'.",
    ],
    [
      'none on gpt-5',
      'gpt-5-mini',
      'none',
      "Unsupported value: 'none' is not supported with the 'gpt-5-mini' model. Supported values are: 'minimal', 'low', 'medium', and 'high'.",
    ],
    ['minimal on o3', 'o3', 'minimal', "Unsupported value: 'minimal' is not supported with the 'o3' model. Supported values are: 'low', 'medium', and 'high'."],
    [
      'none on a codex model',
      'gpt-5.1-codex',
      'none',
      "Unsupported value: 'none' is not supported with the 'gpt-5.1-codex' model. Supported values are: 'low', 'medium', and 'high'.",
    ],
    ['any effort on gpt-4.1', 'gpt-4.1', 'low', "Unsupported parameter: 'reasoning_effort' is not supported with this model."],
  ])('the emulator rejects %s with a 400, as the real API does', async (_name, model, effort, message) => {
    const body = { model, messages: [{ role: 'user', content: 'hi' }], reasoning_effort: effort };
    await expect(live.chat.send(body)).rejects.toMatchObject({ name: 'ProviderError', status: 400, retryable: false });
    const raw = await fetch(`${emulator.url}/v1/chat/completions`, { method: 'POST', body: JSON.stringify(body) });
    expect(raw.status).toBe(400);
    expect(((await raw.json()) as { error: { message: string } }).error.message).toBe(message);
    const responses = await fetch(`${emulator.url}/v1/responses`, {
      method: 'POST',
      body: JSON.stringify({ model, input: 'hi', reasoning: { effort } }),
    });
    expect(responses.status).toBe(400);
    expect(((await responses.json()) as { error: { param: string } }).error.param).toBe('reasoning.effort');
  });
});

describe('§3 Anthropic thinking: requests the Messages API accepts (budget_tokens >= 1024 and < max_tokens, no temperature)', () => {
  const emulator = new ProviderEmulator();
  let live: AnthropicAdapter;
  beforeAll(async () => {
    await emulator.start();
    live = new AnthropicAdapter({ apiKey: 'k', baseURL: emulator.anthropicBaseURL, maxRetries: 0 });
  });
  afterAll(() => emulator.stop());

  const thinking = (effort?: 'low' | 'medium' | 'high') => ({ overrides: { reasoning: { enabled: true, ...(effort ? { effort } : {}) } } });
  it.each<[string, Partial<ModelCall>, Record<string, unknown>]>([
    ['medium with the default max_tokens: half of it', thinking(), { max_tokens: 4096, thinking: { type: 'enabled', budget_tokens: 2048 } }],
    [
      'high under a large cap: the effort budget',
      { ...thinking('high'), maxOutputTokens: 64000 },
      { max_tokens: 64000, thinking: { type: 'enabled', budget_tokens: 16384 } },
    ],
    [
      'high under a 4096 cap: half of it',
      { ...thinking('high'), maxOutputTokens: 4096 },
      { max_tokens: 4096, thinking: { type: 'enabled', budget_tokens: 2048 } },
    ],
    [
      'low at the smallest cap that fits (2048)',
      { ...thinking('low'), maxOutputTokens: 2048 },
      { max_tokens: 2048, thinking: { type: 'enabled', budget_tokens: 1024 } },
    ],
    [
      'medium under a 2000 cap: the minimum 1024 (half would be under it)',
      { ...thinking(), maxOutputTokens: 2000 },
      { max_tokens: 2000, thinking: { type: 'enabled', budget_tokens: 1024 } },
    ],
    [
      'medium under a 1025 cap: the minimum 1024, still under max_tokens',
      { ...thinking(), maxOutputTokens: 1025 },
      { max_tokens: 1025, thinking: { type: 'enabled', budget_tokens: 1024 } },
    ],
    ['a cap of 1024: thinking does not fit and is not sent', { ...thinking('low'), maxOutputTokens: 1024 }, { max_tokens: 1024 }],
    [
      'a temperature with thinking on: left out (only 1 is accepted)',
      { ...thinking(), temperature: 0.7 },
      { max_tokens: 4096, thinking: { type: 'enabled', budget_tokens: 2048 } },
    ],
    ['a temperature without thinking is sent', { temperature: 0.7 }, { max_tokens: 4096, temperature: 0.7 }],
    ['a temperature when thinking does not fit is sent', { ...thinking(), temperature: 0.7, maxOutputTokens: 1000 }, { max_tokens: 1000, temperature: 0.7 }],
  ])('%s', async (_name, over, expected) => {
    const body = live.buildRequest(call('claude-sonnet-4-5', { tools: undefined, ...over }));
    expect(Object.fromEntries(['max_tokens', 'thinking', 'temperature'].filter((k) => k in body).map((k) => [k, body[k]]))).toEqual(expected);
    await expect(live.send(body)).resolves.toMatchObject({ finishReason: 'end_turn' });
  });

  it('a forced tool choice with explicit thinking (plugin preference or player override) goes out as auto and is accepted', async () => {
    for (const over of [{ preferences: named }, { overrides: { toolChoice: 'required' as const } }, { overrides: { toolChoice: named.toolChoice } }]) {
      const c = call('claude-sonnet-4-5', { ...over, overrides: { ...('overrides' in over ? over.overrides : {}), reasoning: { enabled: true } } });
      const body = live.buildRequest(c);
      expect(body.tool_choice).toEqual({ type: 'auto' });
      await expect(live.send(body)).resolves.toBeDefined();
    }
  });
});
