import type { ModelCapabilities } from './model-table';
import type { ModelCall, ReasoningSetting, ToolChoice } from './types';

/** Spec §3 "Default LLM request settings for runtimes": how reasoning is set on this request. */
export type ReasoningDecision = { kind: 'omit' } | { kind: 'disable' } | { kind: 'explicit'; setting: ReasoningSetting };

export function resolveReasoning(call: ModelCall, caps: ModelCapabilities): ReasoningDecision {
  if (call.overrides?.reasoning) return { kind: 'explicit', setting: call.overrides.reasoning };
  // the off switch applies only where no explicit reasoning setting exists, and only if the model has one
  if (call.preferences?.reasoning === false && caps.canDisableReasoning) return { kind: 'disable' };
  return { kind: 'omit' };
}

/** Whether this request will think, as the provider will see it. */
export function thinkingActive(call: ModelCall, caps: ModelCapabilities): boolean {
  const r = resolveReasoning(call, caps);
  if (r.kind === 'explicit') return r.setting.enabled;
  if (r.kind === 'disable') return false;
  return caps.thinkingByDefault;
}

/** The tool choice to send; undefined: leave it out. */
export function resolveToolChoice(call: ModelCall, caps: ModelCapabilities): ToolChoice | undefined {
  // the player's slot override and preset metadata win; auto / none are sent as they are
  if (call.overrides?.toolChoice !== undefined) return call.overrides.toolChoice;
  const preferred = call.preferences?.toolChoice;
  if (preferred === undefined) return undefined;
  // DeepSeek thinking requests reject a forced tool_choice: leave it out
  if (caps.family === 'deepseek' && thinkingActive(call, caps)) return undefined;
  // explicit thinking on Qwen / Anthropic falls back to auto
  if ((caps.family === 'qwen' || caps.family === 'anthropic') && call.overrides?.reasoning?.enabled) return 'auto';
  if (!caps.forcedToolChoice) return 'auto';
  return preferred;
}

const BUDGET = { low: 1024, medium: 4096, high: 16384 } as const;

export function thinkingBudget(setting: ReasoningSetting): number {
  return BUDGET[setting.effort ?? 'medium'];
}
