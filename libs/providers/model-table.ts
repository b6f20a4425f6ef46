/** What a model can do, by the model table (and the slot's llm.toml settings, which win). */
export interface ModelCapabilities {
  family: 'openai' | 'anthropic' | 'gemini' | 'deepseek' | 'qwen' | 'other';
  imageInput: boolean;
  reasoning: 'none' | 'openai-effort' | 'anthropic-thinking' | 'gemini-budget' | 'qwen-enable-thinking' | 'deepseek-thinking';
  /** The model has an off switch for reasoning. */
  canDisableReasoning: boolean;
  /** Thinks unless told not to (DeepSeek flash and V4). */
  thinkingByDefault: boolean;
  /** Accepts a forced (named or required) tool choice. */
  forcedToolChoice: boolean;
}

interface Row extends ModelCapabilities {
  match: RegExp;
}

const base = { imageInput: false, reasoning: 'none', canDisableReasoning: false, thinkingByDefault: false, forcedToolChoice: true } as const;

/** First match wins. */
const TABLE: readonly Row[] = [
  // Claude models that reject forced tool calls (spec §3): fall back to auto
  {
    ...base,
    match: /^claude-(fable|mythos)-5[-.]1/,
    family: 'anthropic',
    imageInput: true,
    reasoning: 'anthropic-thinking',
    canDisableReasoning: true,
    forcedToolChoice: false,
  },
  {
    ...base,
    match: /^claude-(opus|sonnet)-5[-.]5/,
    family: 'anthropic',
    imageInput: true,
    reasoning: 'anthropic-thinking',
    canDisableReasoning: true,
    forcedToolChoice: false,
  },
  { ...base, match: /^claude-/, family: 'anthropic', imageInput: true, reasoning: 'anthropic-thinking', canDisableReasoning: true },
  { ...base, match: /^gpt-5|^o\d/, family: 'openai', imageInput: true, reasoning: 'openai-effort', canDisableReasoning: true },
  { ...base, match: /^gpt-4(o|\.1)/, family: 'openai', imageInput: true },
  { ...base, match: /^gemini-.*flash/, family: 'gemini', imageInput: true, reasoning: 'gemini-budget', canDisableReasoning: true },
  { ...base, match: /^gemini-/, family: 'gemini', imageInput: true, reasoning: 'gemini-budget' },
  { ...base, match: /^deepseek-(flash|v4)/, family: 'deepseek', reasoning: 'deepseek-thinking', canDisableReasoning: true, thinkingByDefault: true },
  { ...base, match: /^deepseek-/, family: 'deepseek', reasoning: 'deepseek-thinking', canDisableReasoning: true },
  { ...base, match: /^qwen.*vl/, family: 'qwen', imageInput: true, reasoning: 'qwen-enable-thinking', canDisableReasoning: true },
  { ...base, match: /^qwen/, family: 'qwen', reasoning: 'qwen-enable-thinking', canDisableReasoning: true },
];

export function capabilitiesOf(model: string, overrides: Partial<ModelCapabilities> = {}): ModelCapabilities {
  const row = TABLE.find((r) => r.match.test(model));
  const { match: _m, ...caps } = row ?? { ...base, match: /./, family: 'other' as const };
  return { ...caps, ...overrides };
}
