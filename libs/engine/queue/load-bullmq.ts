/**
 * What the queue modules take of BullMQ, in one place. Its scripts (`bullmq/dist/cjs/scripts`)
 * are not in its typings: a script as its connections define it is a `BullMqScript`.
 */

/** One of BullMQ's Lua scripts as its connections define it (its table in `bullmq/dist/cjs/scripts`). */
export interface BullMqScript {
  name: string;
  keys: number;
  content: string;
}
