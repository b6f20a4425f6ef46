import type { ModelCapabilities } from './model-table';
import type { ModelCall, ReasoningSetting, ToolChoice } from './types';

/**
 * Spec §3 "Default LLM request settings for runtimes": how reasoning is set on this request.
 * `omit`: send nothing (no setting, or a model that cannot turn reasoning off keeps its capability).
 */
export type ReasoningDecision = { kind: 'omit' } | { kind: 'off' } | { kind: 'on'; effort?: ReasoningSetting['effort'] };

export function resolveReasoning(call: ModelCall, caps: ModelCapabilities): ReasoningDecision {
  const explicit = call.overrides?.reasoning;
  if (explicit?.enabled) return { kind: 'on', effort: explicit.effort };
  // an explicit setting, or `agent.reasoning: false` where none exists: off only if the model has an off value
  if (explicit || call.preferences?.reasoning === false) return caps.reasoningOff === null ? { kind: 'omit' } : { kind: 'off' };
  return { kind: 'omit' };
}

/** Whether this request will think, as the provider will see it. */
export function thinkingActive(call: ModelCall, caps: ModelCapabilities): boolean {
  const r = resolveReasoning(call, caps);
  if (r.kind === 'omit') return caps.thinkingByDefault;
  return r.kind === 'on';
}

/**
 * The OpenAI effort to send (Chat `reasoning_effort`, Responses `reasoning.effort`); undefined:
 * leave it out. Off is the model family's own value: `minimal` on gpt-5, `none` on gpt-5.1+.
 */
export function openAIEffort(call: ModelCall, caps: ModelCapabilities): string | undefined {
  if (caps.reasoning !== 'openai-effort') return undefined;
  const r = resolveReasoning(call, caps);
  if (r.kind === 'on') return r.effort ?? 'medium';
  if (r.kind === 'off' && (caps.reasoningOff === 'minimal' || caps.reasoningOff === 'none')) return caps.reasoningOff;
  return undefined;
}

/**
 * The tool choice to send; undefined: leave it out. The player's slot override and preset metadata
 * win over the plugin's preference; an auto / none the player set is sent as it is. A forced choice
 * (named or required), whoever set it, falls back where the provider would reject it (spec §3).
 */
export function resolveToolChoice(call: ModelCall, caps: ModelCapabilities): ToolChoice | undefined {
  const override = call.overrides?.toolChoice;
  if (override === 'auto' || override === 'none') return override;
  const forced = override ?? call.preferences?.toolChoice;
  if (forced === undefined) return undefined;
  // DeepSeek thinking requests reject a forced tool_choice: leave it out
  if (caps.family === 'deepseek' && thinkingActive(call, caps)) return undefined;
  // explicit thinking on Qwen / Anthropic falls back to auto (Anthropic: a 400 with thinking enabled)
  if ((caps.family === 'qwen' || caps.family === 'anthropic') && call.overrides?.reasoning?.enabled) return 'auto';
  if (!caps.forcedToolChoice) return 'auto';
  return forced;
}

const BUDGET = { low: 1024, medium: 4096, high: 16384 } as const;

export function thinkingBudget(effort: ReasoningSetting['effort']): number {
  return BUDGET[effort ?? 'medium'];
}
