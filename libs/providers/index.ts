export * from './types';
export { OpenAIChatAdapter } from './openai-chat-adapter';
export type { OpenAIChatOptions } from './openai-chat-adapter';
export { parseLlmConfig, loadLlmConfig, SlotConfigError } from './slots';
export type { LlmConfig, SlotConfig, SlotName } from './slots';
export { ProviderRegistry, endpointFromEnv } from './provider-registry';
export type { Endpoint, SlotBinding } from './provider-registry';
export { ProviderEmulator } from './emulator/emulator-server';
export type { EmulatorOptions, EmulatorFault, RecordedRequest } from './emulator/emulator-server';
