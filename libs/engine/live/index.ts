export { InProcessDeltaBus, FINISHED_CALL_GRACE_MS, CALL_DELTAS_TTL_MS } from './delta-bus';
export type { CallDeltas, DeltaBus, StoryDelta } from './delta-bus';
export { DeltaCoalescer, DELTA_MAX_CHARS, DELTA_WINDOW_MS } from './coalescer';
export type { CoalescerClock, CoalescerOptions } from './coalescer';
export { LISTENED_TTL_MS, RedisDeltaBus } from './redis-delta-bus';
export type { RedisDeltaBusOptions } from './redis-delta-bus';
