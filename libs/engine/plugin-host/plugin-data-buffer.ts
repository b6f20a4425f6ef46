import { z } from 'zod';
import { type JsonValue, MAX_LIST_LIMIT, type NewEvent, type PluginDataReader, PluginDataWrittenV1 } from '../../events';
import type { PluginDataWriter } from '../../plugins-sdk';
import { isWellFormedText } from '../../text';
import { PluginDataRefusedError } from './plugin-data-errors';

/** Largest value one row holds, as UTF-8 JSON text. */
export const MAX_PLUGIN_DATA_VALUE_BYTES = 256 * 1024;
/** Most rows one function run may change (set or delete). */
export const MAX_PLUGIN_DATA_CHANGES = 1000;

const wellFormed = (s: string) => isWellFormedText(s);
const hasLoneSurrogate = (v: unknown): boolean =>
  typeof v === 'string'
    ? !wellFormed(v)
    : Array.isArray(v)
      ? v.some(hasLoneSurrogate)
      : v !== null && typeof v === 'object' && Object.entries(v).some(([k, x]) => !wellFormed(k) || hasLoneSurrogate(x));

/** The event's own rules (length, no control characters, no U+0000) plus well-formed Unicode and a size limit. */
const Namespace = PluginDataWrittenV1.shape.namespace.refine(wellFormed, 'must be well-formed Unicode (no lone surrogate)');
const Key = PluginDataWrittenV1.shape.key.refine(wellFormed, 'must be well-formed Unicode (no lone surrogate)');
const Value = PluginDataWrittenV1.shape.value
  .refine((v) => !hasLoneSurrogate(v), 'strings must be well-formed Unicode (no lone surrogate)')
  .refine((v) => Buffer.byteLength(JSON.stringify(v), 'utf8') <= MAX_PLUGIN_DATA_VALUE_BYTES, `must be at most ${MAX_PLUGIN_DATA_VALUE_BYTES} bytes of JSON`);
const ListLimit = z.number().int().min(1).max(MAX_LIST_LIMIT);

/** One row's final change in a run: written with a value, or deleted. */
export interface PluginDataChange {
  namespace: string;
  key: string;
  /** undefined: deleted. */
  value?: JsonValue;
}

/** The event that records a change (`plugin-data.written@1`, or `plugin-data.deleted@1`). */
export function changeEvent(ref: { executionId: string; turnId: string; attempt: number; pluginId: string }, c: PluginDataChange): NewEvent {
  return c.value === undefined
    ? { type: 'plugin-data.deleted@1', data: { ...ref, namespace: c.namespace, key: c.key } }
    : { type: 'plugin-data.written@1', data: { ...ref, namespace: c.namespace, key: c.key, value: c.value } };
}

const rowId = (namespace: string, key: string) => JSON.stringify([namespace, key]);

/**
 * `ctx.pluginData` of one function run: reads go to the store (scoped to the plugin) with this
 * run's own changes on top; writes are checked at once (zod) and kept here, to be appended with the
 * runtime's output in one append. After `close()` (the run ended, or timed out) every call throws.
 */
export class PluginDataBuffer {
  private readonly changed = new Map<string, PluginDataChange>();
  private closed = false;

  constructor(
    private readonly pluginId: string,
    private readonly store: PluginDataReader,
  ) {}

  /** Each changed row's last change, in the order the rows were first changed. */
  changes(): PluginDataChange[] {
    return [...this.changed.values()];
  }

  close(): void {
    this.closed = true;
  }

  /** What the function is given as `ctx.pluginData`. */
  writer(): PluginDataWriter {
    return Object.freeze({
      get: (namespace: string, key: string) => this.get(namespace, key),
      list: (namespace: string, options?: { limit?: number }) => this.list(namespace, options),
      set: (namespace: string, key: string, value: unknown) => this.set(namespace, key, value),
      delete: (namespace: string, key: string) => this.remove(namespace, key),
    });
  }

  private refuse(detail: string): never {
    throw new PluginDataRefusedError(this.pluginId, detail);
  }

  private check<T>(schema: z.ZodType<T>, what: string, value: unknown): T {
    const parsed = schema.safeParse(value);
    if (!parsed.success) this.refuse(`${what}: ${parsed.error.issues.map((i) => `${i.path.length ? i.path.join('.') + ': ' : ''}${i.message}`).join('; ')}`);
    return parsed.data;
  }

  private open(call: string): void {
    if (this.closed) this.refuse(`${call} after the function run ended`);
  }

  private async get(namespace: unknown, key: unknown): Promise<unknown> {
    this.open('get');
    const ns = this.check(Namespace, 'get: namespace', namespace);
    const k = this.check(Key, 'get: key', key);
    const change = this.changed.get(rowId(ns, k));
    if (change) return change.value === undefined ? null : structuredClone(change.value);
    return (await this.store.get(ns, k)) ?? null;
  }

  private async list(namespace: unknown, options: { limit?: number } = {}): Promise<{ key: string; value: unknown }[]> {
    this.open('list');
    const ns = this.check(Namespace, 'list: namespace', namespace);
    const limit = this.check(ListLimit, 'list: limit', options.limit ?? 100);
    const mine = [...this.changed.values()].filter((c) => c.namespace === ns);
    // enough stored rows that, after this run's deletes, `limit` remain when the namespace has them
    const stored = await this.store.list(ns, { limit: Math.min(MAX_LIST_LIMIT, limit + mine.length) });
    const storedKeys = new Set(stored.map((r) => r.key));
    const rows: { key: string; value: unknown }[] = [];
    for (const r of stored) {
      const change = this.changed.get(rowId(ns, r.key));
      if (!change) rows.push(r);
      else if (change.value !== undefined) rows.push({ key: r.key, value: structuredClone(change.value) });
    }
    // rows created by this run come after every stored row (creation order)
    for (const c of mine) if (c.value !== undefined && !storedKeys.has(c.key)) rows.push({ key: c.key, value: structuredClone(c.value) });
    return rows.slice(0, limit);
  }

  private async set(namespace: unknown, key: unknown, value: unknown): Promise<void> {
    this.open('set');
    const ns = this.check(Namespace, 'set: namespace', namespace);
    const k = this.check(Key, 'set: key', key);
    const v = this.check(Value, `set(${JSON.stringify(ns)}, ${JSON.stringify(k)}): value`, value) as JsonValue;
    this.record({ namespace: ns, key: k, value: structuredClone(v) });
  }

  private async remove(namespace: unknown, key: unknown): Promise<void> {
    this.open('delete');
    this.record({ namespace: this.check(Namespace, 'delete: namespace', namespace), key: this.check(Key, 'delete: key', key) });
  }

  private record(change: PluginDataChange): void {
    const id = rowId(change.namespace, change.key);
    if (!this.changed.has(id) && this.changed.size >= MAX_PLUGIN_DATA_CHANGES) this.refuse(`a function run may change at most ${MAX_PLUGIN_DATA_CHANGES} rows`);
    const existing = this.changed.get(id);
    if (existing) Object.assign(existing, { value: change.value });
    else this.changed.set(id, change);
  }
}
