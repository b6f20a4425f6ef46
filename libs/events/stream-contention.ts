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
  /** Stream id → the time its contention is forgotten (insertion order: oldest first). */
  private readonly until = new Map<string, number>();

  constructor(
    private readonly memoryMs = CONTENTION_MEMORY_MS,
    private readonly maxStreams = CONTENTION_MEMORY_STREAMS,
    private readonly now: () => number = Date.now,
  ) {}

  /** True when others appended to the stream first within the last `memoryMs`. */
  contended(streamId: string): boolean {
    const until = this.until.get(streamId);
    if (until === undefined) return false;
    if (until > this.now()) return true;
    this.until.delete(streamId);
    return false;
  }

  /** Others appended to the stream first just now. */
  record(streamId: string): void {
    const now = this.now();
    this.until.delete(streamId);
    this.until.set(streamId, now + this.memoryMs);
    if (this.until.size <= this.maxStreams) return;
    for (const [id, until] of this.until) if (until <= now) this.until.delete(id);
    for (const id of this.until.keys()) {
      if (this.until.size <= this.maxStreams) break;
      this.until.delete(id);
    }
  }
}
