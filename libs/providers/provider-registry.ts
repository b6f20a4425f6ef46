import { OpenAIChatAdapter } from './openai-chat-adapter';
import type { LlmConfig, SlotConfig, SlotName } from './slots';
import type { ProviderAdapter } from './types';

export interface Endpoint {
  /** 'emulator' when no provider key is configured. */
  kind: 'emulator' | 'real';
  baseURL?: string;
  apiKey: string;
}

/**
 * Chooses where calls go: a real provider key in the environment switches to the real endpoint,
 * otherwise everything goes to the emulator URL the host started.
 */
export function endpointFromEnv(env: NodeJS.ProcessEnv, emulatorBaseURL: string | null): Endpoint {
  if (env.OPENAI_API_KEY) return { kind: 'real', apiKey: env.OPENAI_API_KEY, baseURL: env.OPENAI_BASE_URL || undefined };
  const url = env.COVEL_EMULATOR_URL ? `${env.COVEL_EMULATOR_URL.replace(/\/$/, '')}/v1` : emulatorBaseURL;
  if (!url) throw new Error('no provider key and no emulator: set OPENAI_API_KEY or start the provider emulator');
  return { kind: 'emulator', apiKey: 'emulator', baseURL: url };
}

export interface SlotBinding {
  slot: SlotConfig;
  adapter: ProviderAdapter;
}

/** One adapter per slot, built once per process. */
export class ProviderRegistry {
  private readonly bindings = new Map<string, SlotBinding>();

  constructor(
    readonly config: LlmConfig,
    readonly endpoint: Endpoint,
  ) {}

  forSlot(name: SlotName): SlotBinding {
    const existing = this.bindings.get(name);
    if (existing) return existing;
    const slot = this.config.slots[name];
    if (!slot) throw new Error(`unknown model slot "${name}"`);
    const adapter = new OpenAIChatAdapter({ apiKey: this.endpoint.apiKey, baseURL: this.endpoint.baseURL });
    const binding = { slot, adapter };
    this.bindings.set(name, binding);
    return binding;
  }
}
