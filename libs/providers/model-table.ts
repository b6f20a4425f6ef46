/**
 * How a model turns reasoning off (spec §3, `agent.reasoning: false`):
 * - `switch`: the family's own off switch (Anthropic `thinking: disabled`, Gemini budget 0,
 *   Qwen `enable_thinking: false`, DeepSeek `thinking: disabled`);
 * - `minimal` / `none`: the OpenAI effort value that turns it off (gpt-5 takes `minimal`;
 *   gpt-5.1 and later reject `minimal` and take `none`);
 * - `null`: it cannot be turned off (o-series, codex, pro, Gemini Pro): nothing is sent and the
 *   model keeps its capability.
 */
export type ReasoningOff = 'switch' | 'minimal' | 'none' | null;

/** What a model can do, by the model table (and the slot's llm.toml settings, which win). */
export interface ModelCapabilities {
  family: 'openai' | 'anthropic' | 'gemini' | 'deepseek' | 'qwen' | 'other';
  imageInput: boolean;
  reasoning: 'none' | 'openai-effort' | 'anthropic-thinking' | 'gemini-budget' | 'qwen-enable-thinking' | 'deepseek-thinking';
  /** The off value of this model's reasoning; null: it has none. */
  reasoningOff: ReasoningOff;
  /** Thinks unless told not to (DeepSeek flash and V4). */
  thinkingByDefault: boolean;
  /** Accepts a forced (named or required) tool choice. */
  forcedToolChoice: boolean;
}

interface Row extends ModelCapabilities {
  match: RegExp;
}

const base = { imageInput: false, reasoning: 'none', reasoningOff: null, thinkingByDefault: false, forcedToolChoice: true } as const;
const openAIReasoning = { ...base, family: 'openai', imageInput: true, reasoning: 'openai-effort' } as const;

/** First match wins. */
const TABLE: readonly Row[] = [
  // Claude models that reject forced tool calls (spec §3): fall back to auto
  {
    ...base,
    match: /^claude-(fable|mythos)-5[-.]1/,
    family: 'anthropic',
    imageInput: true,
    reasoning: 'anthropic-thinking',
    reasoningOff: 'switch',
    forcedToolChoice: false,
  },
  {
    ...base,
    match: /^claude-(opus|sonnet)-5[-.]5/,
    family: 'anthropic',
    imageInput: true,
    reasoning: 'anthropic-thinking',
    reasoningOff: 'switch',
    forcedToolChoice: false,
  },
  { ...base, match: /^claude-/, family: 'anthropic', imageInput: true, reasoning: 'anthropic-thinking', reasoningOff: 'switch' },
  // OpenAI reasoning models: the off value differs by family
  { ...openAIReasoning, match: /^(gpt-5(\.\d+)?-codex|codex-)/ }, // codex: low / medium / high only
  { ...openAIReasoning, match: /^gpt-5(\.\d+)?-pro/ }, // pro: high (5.x-pro: medium and up) only
  { ...base, match: /^gpt-5(\.\d+)?-chat/, family: 'openai', imageInput: true }, // chat models: no effort control
  { ...openAIReasoning, match: /^gpt-5\.\d/, reasoningOff: 'none' }, // gpt-5.1 and later: none, low, medium, high
  { ...openAIReasoning, match: /^gpt-5/, reasoningOff: 'minimal' }, // gpt-5, -mini, -nano: minimal, low, medium, high
  { ...openAIReasoning, match: /^o\d/ }, // o-series: low / medium / high only
  { ...base, match: /^gpt-4(o|\.1)/, family: 'openai', imageInput: true },
  { ...base, match: /^gemini-.*flash/, family: 'gemini', imageInput: true, reasoning: 'gemini-budget', reasoningOff: 'switch' },
  { ...base, match: /^gemini-/, family: 'gemini', imageInput: true, reasoning: 'gemini-budget' },
  { ...base, match: /^deepseek-(flash|v4)/, family: 'deepseek', reasoning: 'deepseek-thinking', reasoningOff: 'switch', thinkingByDefault: true },
  { ...base, match: /^deepseek-/, family: 'deepseek', reasoning: 'deepseek-thinking', reasoningOff: 'switch' },
  { ...base, match: /^qwen.*vl/, family: 'qwen', imageInput: true, reasoning: 'qwen-enable-thinking', reasoningOff: 'switch' },
  { ...base, match: /^qwen/, family: 'qwen', reasoning: 'qwen-enable-thinking', reasoningOff: 'switch' },
];

export function capabilitiesOf(model: string, overrides: Partial<ModelCapabilities> = {}): ModelCapabilities {
  const row = TABLE.find((r) => r.match.test(model));
  const { match: _m, ...caps } = row ?? { ...base, match: /./, family: 'other' as const };
  return { ...caps, ...overrides };
}
