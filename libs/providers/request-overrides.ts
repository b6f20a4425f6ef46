import type { LlmConfig, SlotConfig } from './slots';
import type { ModelCall } from './types';

/** Explicit request settings (`ModelCall.overrides`): they win over a runtime's `agent` preferences (spec §3). */
export type RequestOverrides = NonNullable<ModelCall['overrides']>;

/**
 * Layers of explicit settings, most specific first: each field comes from the first layer that
 * sets it (a layer may be absent).
 */
export function layerOverrides(...layers: readonly (RequestOverrides | undefined)[]): RequestOverrides {
  const reasoning = layers.find((l) => l?.reasoning !== undefined)?.reasoning;
  const toolChoice = layers.find((l) => l?.toolChoice !== undefined)?.toolChoice;
  return { ...(reasoning ? { reasoning } : {}), ...(toolChoice ? { toolChoice } : {}) };
}

/** What `llm.toml` sets on a slot's requests: the slot's own `reasoning` / `toolChoice`, else its preset's. */
export function configuredOverrides(config: Pick<LlmConfig, 'presets'>, slot: SlotConfig): RequestOverrides {
  const preset = slot.preset !== undefined && config.presets && Object.hasOwn(config.presets, slot.preset) ? config.presets[slot.preset] : undefined;
  return layerOverrides(slot, preset);
}
