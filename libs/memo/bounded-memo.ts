export interface BoundedMemoOptions {
  /** Entries kept at most: setting one more forgets the oldest (the least recently set). */
  maxEntries: number;
  /** Each entry is answered for this long after it was set (ms), then forgotten; absent: until it is the oldest at the bound. 0 or less: nothing is kept. */
  ttlMs?: number;
  /** The clock `ttlMs` is counted on (ms); `Date.now()` by default. */
  now?: () => number;
}

/**
 * A process's memory of answers that are costly to find again (a hash, a parsed tag, a read that
 * does not change for a while): a map of at most `maxEntries` keys in the order they were set, the
 * oldest forgotten first; with `ttlMs`, an entry is answered only that long after it was set.
 * Setting a key again makes it the newest. Not shared between processes: only ever a shortcut.
 */
export class BoundedMemo<K, V> {
  /** Key → value and (with `ttlMs`) the time it is forgotten; insertion order: the oldest set first. */
  private readonly entries = new Map<K, { value: V; until: number }>();
  private readonly now: () => number;

  constructor(private readonly options: BoundedMemoOptions) {
    this.now = options.now ?? (() => Date.now());
  }

  /** The value while it is kept (and fresh); undefined when absent or stale (a stale entry is dropped). */
  get(key: K): V | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    if (this.options.ttlMs === undefined || entry.until > this.now()) return entry.value;
    this.entries.delete(key);
    return undefined;
  }

  /** Whether `get` answers for the key (a value may itself be undefined or null). */
  has(key: K): boolean {
    if (!this.entries.has(key)) return false;
    if (this.options.ttlMs === undefined || this.entries.get(key)!.until > this.now()) return true;
    this.entries.delete(key);
    return false;
  }

  /** Keeps the value as the newest entry; at the bound the stale entries go first, then the oldest. */
  set(key: K, value: V): void {
    const { ttlMs, maxEntries } = this.options;
    if (ttlMs !== undefined && ttlMs <= 0) return;
    this.entries.delete(key);
    const now = ttlMs === undefined ? 0 : this.now();
    if (ttlMs !== undefined) this.dropStale(now);
    while (this.entries.size >= Math.max(1, maxEntries)) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(key, { value, until: ttlMs === undefined ? Infinity : now + ttlMs });
  }

  delete(key: K): void {
    this.entries.delete(key);
  }

  /** Forgets every entry whose value (or key) matches. */
  deleteWhere(matches: (value: V, key: K) => boolean): void {
    for (const [key, entry] of this.entries) if (matches(entry.value, key)) this.entries.delete(key);
  }

  clear(): void {
    this.entries.clear();
  }

  /** Entries held (stale ones not yet dropped included). */
  get size(): number {
    return this.entries.size;
  }

  /** The stale entries at the front (one `ttlMs` for all: they are the oldest set), each dropped once. */
  private dropStale(now: number): void {
    for (const [key, entry] of this.entries) {
      if (entry.until > now) return;
      this.entries.delete(key);
    }
  }
}
