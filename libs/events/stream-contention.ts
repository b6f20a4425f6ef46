import { BoundedMemo } from '../memo';

/** How long a stream counts as contended after others last appended to it first (ms). */
export const CONTENTION_MEMORY_MS = 2_000;
/** At most this many streams are remembered; past it the expired ones go, then the oldest. */
export const CONTENTION_MEMORY_STREAMS = 1_024;

/**
 * Which streams another writer appended to first lately, in this process: for
 * `EventStore.appendCatchingUp`, whose first try at the caller's version is wasted on such a
 * stream (sibling runtimes of a turn appending at once), so it goes to the locked path directly
 * until the stream has been quiet for `memoryMs`. Only a choice of path: both write the same.
 */
export class StreamContention {
  /** Stream ids whose contention is remembered for `memoryMs`. */
  private readonly streams: BoundedMemo<string, true>;

  constructor(memoryMs = CONTENTION_MEMORY_MS, maxStreams = CONTENTION_MEMORY_STREAMS, now: () => number = Date.now) {
    this.streams = new BoundedMemo({ maxEntries: maxStreams, ttlMs: memoryMs, now });
  }

  /** True when others appended to the stream first within the last `memoryMs`. */
  contended(streamId: string): boolean {
    return this.streams.has(streamId);
  }

  /** Others appended to the stream first just now. */
  record(streamId: string): void {
    this.streams.set(streamId, true);
  }
}
