import type { StoredEvent } from './event-types';
import {
  checkLimit,
  DEFAULT_LIST_LIMIT,
  DEFAULT_SELF_DATA_LIMIT,
  type JsonValue,
  MAX_LIST_LIMIT,
  type PluginDataRow,
  selfDataSplit,
  type SelfDataView,
} from './plugin-data-view';

interface FoldedRow {
  key: string;
  value: JsonValue;
  created: number;
  updated: number;
}

/**
 * One session's plugin data folded from its events in memory: what the `plugin_data` projection
 * holds, with the same reads as `PluginDataStore` (same rows, same order), for rebuilding a request
 * from the log alone (replay, audit). Apply the session's events in stream order, up to the point
 * the read happened.
 */
export class PluginDataFold {
  private readonly namespaces = new Map<string, Map<string, FoldedRow>>();

  apply(event: StoredEvent): void {
    if (event.type === 'plugin-data.written@1') {
      const rows = this.rowsOf(event.data.pluginId, event.data.namespace, true);
      const existing = rows.get(event.data.key);
      rows.set(event.data.key, {
        key: event.data.key,
        value: event.data.value as JsonValue,
        created: existing?.created ?? event.globalPosition,
        updated: event.globalPosition,
      });
    } else if (event.type === 'plugin-data.deleted@1') {
      this.rowsOf(event.data.pluginId, event.data.namespace, false)?.delete(event.data.key);
    }
  }

  /**
   * One row as the `plugin_data` projection holds it (`created` / `updated`: its created_position
   * and updated_position, the global positions `apply` would have given it): a snapshot of the
   * store read into a fold (`PluginDataSnapshot`), answered by the same reads.
   */
  load(row: { pluginId: string; namespace: string; key: string; value: JsonValue; created: number; updated: number }): void {
    this.rowsOf(row.pluginId, row.namespace, true).set(row.key, { key: row.key, value: row.value, created: row.created, updated: row.updated });
  }

  /** A fold of its own holding the same rows (the values shared: never changed in place). */
  copy(): PluginDataFold {
    const copy = new PluginDataFold();
    for (const [id, rows] of this.namespaces) copy.namespaces.set(id, new Map(rows));
    return copy;
  }

  /** How many rows the plugin's namespace holds. */
  rowCount(pluginId: string, namespace: string): number {
    return this.rowsOf(pluginId, namespace, false)?.size ?? 0;
  }

  get(pluginId: string, namespace: string, key: string): JsonValue | undefined {
    return this.rowsOf(pluginId, namespace, false)?.get(key)?.value;
  }

  list(pluginId: string, namespace: string, options: { limit?: number } = {}): PluginDataRow[] {
    const limit = options.limit ?? DEFAULT_LIST_LIMIT;
    checkLimit('list', limit, MAX_LIST_LIMIT);
    return this.byCreation(pluginId, namespace).slice(0, limit).map(toRow);
  }

  selfData(pluginId: string, namespace: string, options: { limit?: number } = {}): SelfDataView {
    const { anchors, recent } = selfDataSplit(options.limit ?? DEFAULT_SELF_DATA_LIMIT);
    const all = this.byCreation(pluginId, namespace);
    const head = all.slice(0, anchors);
    const rest = all
      .slice(anchors)
      .sort((a, b) => b.updated - a.updated)
      .slice(0, recent);
    return { namespace, rows: [...head, ...rest.sort((a, b) => a.created - b.created)].map(toRow), totalRows: all.length };
  }

  private byCreation(pluginId: string, namespace: string): FoldedRow[] {
    return [...(this.rowsOf(pluginId, namespace, false)?.values() ?? [])].sort((a, b) => a.created - b.created);
  }

  private rowsOf(pluginId: string, namespace: string, create: true): Map<string, FoldedRow>;
  private rowsOf(pluginId: string, namespace: string, create: false): Map<string, FoldedRow> | undefined;
  private rowsOf(pluginId: string, namespace: string, create: boolean): Map<string, FoldedRow> | undefined {
    const id = JSON.stringify([pluginId, namespace]);
    let rows = this.namespaces.get(id);
    if (!rows && create) this.namespaces.set(id, (rows = new Map()));
    return rows;
  }
}

const toRow = (r: FoldedRow): PluginDataRow => ({ key: r.key, value: r.value });
