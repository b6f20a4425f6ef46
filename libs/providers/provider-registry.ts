import { AnthropicAdapter } from './anthropic-adapter';
import { type CallDeadlineListener, DeadlineAdapter } from './call-deadlines';
import { GeminiAdapter } from './gemini-adapter';
import { capabilitiesOf, type ModelCapabilities } from './model-table';
import { OpenAIChatAdapter } from './openai-chat-adapter';
import { OpenAIResponsesAdapter } from './openai-responses-adapter';
import type { ProviderEnvName } from './provider-env';
import { configuredOverrides, type RequestOverrides } from './request-overrides';
import { callDeadlines, type LlmConfig, type SlotConfig, SlotConfigError, type SlotName } from './slots';
import type { Protocol, ProviderAdapter } from './types';

export interface Endpoint {
  /** 'emulator' when no key for the protocol is configured. */
  kind: 'emulator' | 'real';
  /** Root URL (each SDK adds its own path: /v1 for OpenAI is included here). */
  baseURL?: string;
  apiKey: string;
}

/**
 * Each protocol's key and base-URL variables (docker-compose.yml passes every one of them); typed by
 * `ProviderEnv`: a variable read here is one docs/configuration.md lists.
 */
export const PROVIDER_ENV: Readonly<Record<Protocol, { readonly key: ProviderEnvName; readonly url: ProviderEnvName }>> = {
  'openai-chat': { key: 'OPENAI_API_KEY', url: 'OPENAI_BASE_URL' },
  'openai-responses': { key: 'OPENAI_API_KEY', url: 'OPENAI_BASE_URL' },
  anthropic: { key: 'ANTHROPIC_API_KEY', url: 'ANTHROPIC_BASE_URL' },
  gemini: { key: 'GEMINI_API_KEY', url: 'GEMINI_BASE_URL' },
};

/** A protocol's real key in the environment switches it to the real endpoint. */
export function hasRealKey(protocol: Protocol, env: NodeJS.ProcessEnv): boolean {
  return Boolean(env[PROVIDER_ENV[protocol].key]);
}

/** Where a protocol's calls go: the real endpoint with a key, else the emulator the host started. */
export function endpointFor(protocol: Protocol, env: NodeJS.ProcessEnv, emulatorRoot: string | null): Endpoint {
  const { key, url } = PROVIDER_ENV[protocol];
  if (env[key]) return { kind: 'real', apiKey: env[key]!, baseURL: env[url] || undefined };
  const root = (env.COVEL_EMULATOR_URL || emulatorRoot)?.replace(/\/$/, '');
  if (!root) throw new SlotConfigError('environment', [{ path: key, message: `no ${key} and no emulator: set ${key} or start the provider emulator` }]);
  return { kind: 'emulator', apiKey: 'emulator', baseURL: protocol.startsWith('openai') ? `${root}/v1` : root };
}

export interface SlotBinding {
  slot: SlotConfig;
  adapter: ProviderAdapter;
  capabilities: ModelCapabilities;
  /** What `llm.toml` sets on the slot's requests (`reasoning`, `toolChoice`: the slot's own, else its preset's). */
  overrides: RequestOverrides;
}

/** What the SDK's own timeout (per attempt) leaves to the deadlines: they always abort a call first. */
const SDK_TIMEOUT_MARGIN_MS = 5_000;

/**
 * The slot's adapter on its SDK. The deadlines (`DeadlineAdapter`, which the registry puts around
 * it) run over the whole call, the SDK's retries (429, 5xx, a reset connection) included, and an
 * aborted call is not retried by the SDK: so the SDK's own timeout is set past the slot's longest
 * deadline (OpenAI, Anthropic: per attempt, up to the response headers), where it never decides;
 * Gemini's would stay armed while a stream is read, so it is not set there.
 */
export function createAdapter(slot: SlotConfig, endpoint: Endpoint): ProviderAdapter {
  const capabilities = slotCapabilityOverrides(slot);
  const deadlines = callDeadlines(slot);
  const timeoutMs = Math.max(deadlines.firstByteMs, deadlines.totalMs) + SDK_TIMEOUT_MARGIN_MS;
  const common = { apiKey: endpoint.apiKey, baseURL: endpoint.baseURL, capabilities, timeoutMs };
  switch (slot.protocol) {
    case 'openai-chat':
      return new OpenAIChatAdapter({ ...common, lateSystemAsUser: slot.lateSystemAsUser ?? false });
    case 'openai-responses':
      return new OpenAIResponsesAdapter({ ...common, lateSystemAsUser: slot.lateSystemAsUser ?? false });
    case 'anthropic':
      return new AnthropicAdapter(common);
    case 'gemini':
      return new GeminiAdapter({ ...common, timeoutMs: null, lateSystemAsUser: slot.lateSystemAsUser ?? true });
  }
}

function slotCapabilityOverrides(slot: SlotConfig): Partial<ModelCapabilities> {
  return {
    ...(slot.imageInput !== undefined ? { imageInput: slot.imageInput } : {}),
    ...(slot.forcedToolChoice !== undefined ? { forcedToolChoice: slot.forcedToolChoice } : {}),
  };
}

/** One adapter per slot, built once per process. */
export class ProviderRegistry {
  private readonly bindings = new Map<string, SlotBinding>();

  constructor(
    readonly config: LlmConfig,
    private readonly endpointOf: (protocol: Protocol) => Endpoint,
    /** Told of each call that missed a deadline and each answered one (`/health`'s providers). */
    private readonly listener?: CallDeadlineListener,
  ) {}

  forSlot(name: SlotName): SlotBinding {
    const existing = this.bindings.get(name);
    if (existing) return existing;
    const slot = this.config.slots[name];
    if (!slot) throw new SlotConfigError('llm.toml', [{ path: `slots.${name}`, message: 'unknown model slot' }]);
    const binding = {
      slot,
      // every call of the slot runs under its deadlines (runtimes, summaries, world generation)
      adapter: new DeadlineAdapter(createAdapter(slot, this.endpointOf(slot.protocol)), {
        slot: name,
        deadlines: callDeadlines(slot),
        ...(this.listener ? { listener: this.listener } : {}),
      }),
      capabilities: capabilitiesOf(slot.model, slotCapabilityOverrides(slot)),
      overrides: configuredOverrides(this.config, slot),
    };
    this.bindings.set(name, binding);
    return binding;
  }
}
