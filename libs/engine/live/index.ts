export { InProcessDeltaBus, FINISHED_CALL_GRACE_MS, CALL_DELTAS_TTL_MS } from './delta-bus';
export type { DeltaBus, StoryDelta } from './delta-bus';
export { RedisDeltaBus } from './redis-delta-bus';
export type { RedisDeltaBusOptions } from './redis-delta-bus';
