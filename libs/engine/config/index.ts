/** The engine's configuration: the environment validated (`loadConfig`) and the API key strength check. */
export { MIN_API_KEY_BITS, MIN_API_KEY_LENGTH, apiKeyWeakness, estimatedKeyBits } from './api-key-strength';
export { configWarnings, DEFAULT_HISTORY_MESSAGE_LIMIT, DEFAULT_TURN_DEADLINE_MS, EngineEnv, loadConfig } from './config';
export type { EngineConfig } from './config';
export { ConfigError, loadEngineLocation } from '../../engine-client';
export type { EngineLocationConfig } from '../../engine-client';
