import { ioredis } from '../redis/load-ioredis';

/**
 * What the queue modules take of BullMQ, in one place. Its scripts (`bullmq/dist/cjs/scripts`)
 * are not in its typings: a script as its connections define it is a `BullMqScript`.
 */

/**
 * BullMQ, required at first use rather than at the top: only a process on Redis queues needs it,
 * and the embedded default (in-process queue) and every engine test file would load it (~0.1 s of
 * CPU, ~150 ms under Jest, which evaluates it anew per file).
 */
export function bullmq(): typeof import('bullmq') {
  ioredis(); // through the engine's loader first: its load hooks (the Redis command counters) see BullMQ's clients too
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return require('bullmq') as typeof import('bullmq');
}

/** One of BullMQ's Lua scripts as its connections define it (its table in `bullmq/dist/cjs/scripts`). */
export interface BullMqScript {
  name: string;
  keys: number;
  content: string;
}
