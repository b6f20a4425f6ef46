import { type Kysely, type RawBuilder, sql } from 'kysely';
import {
  checkLimit,
  DEFAULT_LIST_LIMIT,
  DEFAULT_SELF_DATA_LIMIT,
  type JsonValue,
  MAX_LIST_LIMIT,
  type PluginDataRow,
  type PluginDataScope,
  selfDataSplit,
  type SelfDataView,
} from './plugin-data-view';
import {
  type PluginDataSnapshot,
  readSessionPluginData,
  type SessionPluginDataBounds,
  sessionPluginDataJson,
  sessionPluginDataOf,
} from './plugin-data-snapshot';
import type { Database } from './schema';

/** One plugin's data in one session of one tenant: the reads `ctx.pluginData` and `io.selfData` need. */
export interface PluginDataReader {
  /** The value of `key`, or undefined when the namespace has no such key. */
  get(namespace: string, key: string): Promise<JsonValue | undefined>;
  /** The namespace's first `limit` rows (default 100, at most 1000) in creation order. */
  list(namespace: string, options?: { limit?: number }): Promise<PluginDataRow[]>;
  /** The bounded store projection of spec §4 (see `selfDataQuery`). */
  selfData(namespace: string, options?: { limit?: number }): Promise<SelfDataView>;
}

/** Reads of the `plugin_data` inline projection; each scoped to a tenant, a session and a plugin. */
export class PluginDataStore {
  constructor(
    private readonly db: Kysely<Database>,
    /** How much of a session `session` reads in its one statement (default `SESSION_PLUGIN_DATA_BOUNDS`). */
    private readonly sessionBounds?: SessionPluginDataBounds,
  ) {}

  /** Every plugin's data in one session of one tenant, bounded, in one statement (`readSessionPluginData`). */
  session(scope: { tenantId: string; sessionId: string }): Promise<PluginDataSnapshot> {
    return readSessionPluginData(this.db, scope, this.sessionBounds);
  }

  /**
   * `session`'s read as one value for another statement to read beside its own, in its snapshot
   * (`read`), and the snapshot made of what it read (`snapshot`).
   */
  sessionAlongside(scope: { tenantId: string; sessionId: string }): { read: RawBuilder<unknown>; snapshot(value: unknown): PluginDataSnapshot } {
    const bounds = this.sessionBounds;
    return { read: sessionPluginDataJson(scope, bounds), snapshot: (value) => sessionPluginDataOf(value, bounds) };
  }

  /** The reads of one plugin in one session of one tenant. */
  scope(scope: PluginDataScope): PluginDataReader {
    const { db } = this;
    const rows = (namespace: string) =>
      db
        .selectFrom('plugin_data')
        .where('session_id', '=', scope.sessionId)
        .where('plugin_id', '=', scope.pluginId)
        .where('namespace', '=', namespace)
        .where('tenant_id', '=', scope.tenantId);
    const read = async (namespace: string, keys: readonly string[]): Promise<Map<string, JsonValue>> => {
      if (keys.length === 1) {
        const row = await rows(namespace).select('value').where('key', '=', keys[0]).executeTakeFirst();
        return new Map(row ? [[keys[0], row.value as JsonValue]] : []);
      }
      const found = await rows(namespace).select(['key', 'value']).where('key', 'in', keys).execute();
      return new Map(found.map((r) => [r.key, r.value as JsonValue]));
    };
    const get = coalescedGets(read);
    return {
      get,
      async list(namespace, options = {}) {
        const limit = options.limit ?? DEFAULT_LIST_LIMIT;
        checkLimit('list', limit, MAX_LIST_LIMIT);
        const found = await rows(namespace).select(['key', 'value']).orderBy('created_position').limit(limit).execute();
        return found.map((r) => ({ key: r.key, value: r.value as JsonValue }));
      },
      async selfData(namespace, options = {}) {
        const { rows: found } = await selfDataQuery(scope, namespace, options.limit ?? DEFAULT_SELF_DATA_LIMIT).execute(db);
        return { namespace, rows: found.map((r) => ({ key: r.key, value: r.value })), totalRows: found.length === 0 ? 0 : Number(found[0].total_rows) };
      },
    };
  }
}

/**
 * `get`s of one reader asked in the same tick (a handler's `Promise.all` over its keys: affinity
 * reads one key per tracked character) as one statement per namespace (`key in (...)`), each
 * caller given its own key's value (issue 33: a statement, and a transaction, per key before). A
 * lone `get` is the one-key statement it always was. A failed read fails every `get` it carried.
 */
export function coalescedGets(
  read: (namespace: string, keys: readonly string[]) => Promise<ReadonlyMap<string, JsonValue>>,
): (namespace: string, key: string) => Promise<JsonValue | undefined> {
  let batch: Map<string, Map<string, { resolve: (value: JsonValue | undefined) => void; reject: (error: unknown) => void }[]>> | null = null;
  const flush = () => {
    const asked = batch!;
    batch = null;
    for (const [namespace, waiting] of asked) {
      read(namespace, [...waiting.keys()]).then(
        (values) => {
          for (const [key, callers] of waiting) for (const caller of callers) caller.resolve(values.get(key));
        },
        (error: unknown) => {
          for (const callers of waiting.values()) for (const caller of callers) caller.reject(error);
        },
      );
    }
  };
  return (namespace, key) =>
    new Promise((resolve, reject) => {
      if (batch === null) {
        batch = new Map();
        queueMicrotask(flush);
      }
      let waiting = batch.get(namespace);
      if (!waiting) batch.set(namespace, (waiting = new Map()));
      let callers = waiting.get(key);
      if (!callers) waiting.set(key, (callers = []));
      callers.push({ resolve, reject });
    });
}

/**
 * Spec §4 "io.selfData takes only a limited number of rows", asked of the store in one statement:
 * the namespace's earliest ceil(limit / 2) rows by creation (anchors, a forward range of
 * `plugin_data_created`) and, of the rows created after them, the limit − anchors most recently
 * updated (a backward range of `plugin_data_updated` that skips at most the anchors), each row
 * carrying the namespace's total (its `plugin_data_namespaces` row, one key: never a count of the
 * rows). At most `limit` rows come back; none for an empty namespace (total 0).
 *
 * Order: every row returned in creation order (anchors first, as the earliest, then the recent
 * rows by creation). So a namespace of `limit` rows or fewer comes back whole in creation order,
 * and a row keeps its place from one turn to the next while it stays in the window.
 */
export function selfDataQuery(
  scope: PluginDataScope,
  namespace: string,
  limit: number,
): RawBuilder<{ key: string; value: JsonValue; total_rows: number | string }> {
  const { anchors, recent } = selfDataSplit(limit);
  const inNamespace = sql`session_id = ${scope.sessionId} and plugin_id = ${scope.pluginId} and namespace = ${namespace} and tenant_id = ${scope.tenantId}`;
  return sql<{ key: string; value: JsonValue; total_rows: number | string }>`
    with anchors as (
      select key, value, created_position from plugin_data
      where ${inNamespace}
      order by created_position
      limit ${anchors}
    ),
    recent as (
      select key, value, created_position from plugin_data
      where ${inNamespace} and created_position > (select coalesce(max(created_position), 0) from anchors)
      order by updated_position desc
      limit ${recent}
    )
    select key, value, (select row_count from plugin_data_namespaces where ${inNamespace}) as total_rows
    from (select * from anchors union all select * from recent) as picked
    order by created_position`;
}
