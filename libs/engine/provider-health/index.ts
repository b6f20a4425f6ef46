export { InProcessProviderHealth, SLOW_WINDOW_MS } from './provider-health';
export type { ProviderHealth, ProviderSlotHealth, DeadlineMiss } from './provider-health';
export { RedisProviderHealth } from './redis-provider-health';
