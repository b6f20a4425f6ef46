export * from './port';
export { InProcessQueue } from './in-process';
export type { InProcessQueueOptions } from './in-process';
export { BullMqTurnQueue, deleteQueueKeys, redisConnection, ENQUEUE_TIMEOUT_MS } from './bullmq';
export type { BullMqOptions, BullMqConsumerOptions, BullMqFairnessOptions } from './bullmq';
export { FAIR_TICK_MS } from './bullmq';
