/**
 * A bounded cache of values each answered for `ttlMs` after it was set (a lookup a process may
 * answer from memory for a short while: API keys, tenant limits). At `maxEntries` the oldest entry
 * is forgotten first. `ttlMs` 0: nothing is kept.
 */
export class TtlCache<K, V> {
  private readonly entries = new Map<K, { value: V; until: number }>();

  constructor(private readonly options: { ttlMs: number; maxEntries: number }) {}

  /** The value while it is fresh; undefined when absent or stale (a stale entry is dropped). */
  get(key: K): V | undefined {
    const entry = this.entries.get(key);
    if (entry && entry.until > Date.now()) return entry.value;
    this.entries.delete(key);
    return undefined;
  }

  set(key: K, value: V): void {
    if (this.options.ttlMs <= 0) return;
    this.entries.delete(key);
    if (this.entries.size >= this.options.maxEntries) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(key, { value, until: Date.now() + this.options.ttlMs });
  }

  delete(key: K): void {
    this.entries.delete(key);
  }

  /** Forgets every entry whose value matches (e.g. every hash a revoked key was remembered under). */
  deleteWhere(matches: (value: V) => boolean): void {
    for (const [key, entry] of this.entries) if (matches(entry.value)) this.entries.delete(key);
  }
}
