import { AnthropicAdapter, GeminiAdapter, OpenAIChatAdapter, OpenAIResponsesAdapter } from '..';
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
      { tool_choice: { type: 'auto' }, thinking: { type: 'enabled', budget_tokens: 4096 } },
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

  it('the same preference is used for streaming and non-streaming requests', () => {
    const a = chat.buildRequest(call('qwen3-32b', { ...off, preferences: { ...off.preferences, ...named } }));
    const b = chat.buildRequest(call('qwen3-32b', { ...off, preferences: { ...off.preferences, ...named }, stream: true }));
    expect([a.tool_choice, a.enable_thinking]).toEqual([b.tool_choice, b.enable_thinking]);
  });
});
