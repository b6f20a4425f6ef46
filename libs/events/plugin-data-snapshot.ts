import { type Kysely, type RawBuilder, sql } from 'kysely';
import type { StoredEvent } from './event-types';
import { PluginDataFold } from './plugin-data-fold';
import type { JsonValue, PluginDataRow, SelfDataView } from './plugin-data-view';
import type { Database } from './schema';

/**
 * How much of a session's plugin data one snapshot statement brings back: rows in all, bytes of
 * values (as JSON text) in all, and rows of one namespace (a namespace with more is not read at all:
 * its reads go to the store, `selfData` as its bounded projection, spec §4).
 */
export interface SessionPluginDataBounds {
  rows: number;
  bytes: number;
  perNamespace: number;
}

/** Up to 256 rows and 512 KiB of values of the session's namespaces of at most 64 rows each. */
export const SESSION_PLUGIN_DATA_BOUNDS: SessionPluginDataBounds = Object.freeze({ rows: 256, bytes: 512 * 1024, perNamespace: 64 });

const groupId = (pluginId: string, namespace: string) => JSON.stringify([pluginId, namespace]);

/**
 * One session's plugin data (every plugin's) as one statement read it, bounded: the namespaces it
 * holds whole (`covers`) answer `get`, `list` and `selfData` from memory with the same rows, in the
 * same order, as `PluginDataStore` (the reads of `PluginDataFold`); any other namespace must be read
 * from the store. When the bounds cut no row, a namespace it has no row of is empty.
 */
export class PluginDataSnapshot {
  private fold = new PluginDataFold();

  constructor(
    rows: readonly { pluginId: string; namespace: string; key: string; value: JsonValue; created: number; updated: number }[],
    /** Which namespaces (`groupId`) are held whole: every one but `except`, or `only` these. */
    private readonly held: { except: ReadonlySet<string> } | { only: ReadonlySet<string> },
  ) {
    for (const row of rows) this.fold.load(row);
  }

  /**
   * The snapshot as the store holds the session's plugin data once `events` (its plugin-data events
   * appended after this snapshot's state, in stream order, none that folds the story again) are
   * applied, as the `plugin_data` projection applies them one by one: a namespace held whole stays
   * held with them applied (unless it grows past `bounds.perNamespace` rows: then it is read from the
   * store, as a read of the snapshot would leave it out); one not held stays not held. An event it
   * held already (the snapshot's read saw a write the journal had not caught up with) is applied again
   * to the same end: a write keeps the row's creation, a delete of a row gone is nothing.
   */
  after(events: readonly StoredEvent[], bounds: SessionPluginDataBounds = SESSION_PLUGIN_DATA_BOUNDS): PluginDataSnapshot {
    const grown = new Set<string>();
    const fold = this.fold.copy();
    for (const event of events) {
      if (event.type !== 'plugin-data.written@1' && event.type !== 'plugin-data.deleted@1') continue;
      // the value as the projection's jsonb column gives it back (its keys reordered)
      fold.apply({
        ...event,
        data: { ...event.data, ...(event.type === 'plugin-data.written@1' ? { value: asJsonb(event.data.value as JsonValue) } : {}) },
      } as StoredEvent);
      const { pluginId, namespace } = event.data;
      if (this.covers(pluginId, namespace) && fold.rowCount(pluginId, namespace) > bounds.perNamespace) grown.add(groupId(pluginId, namespace));
    }
    const held =
      'only' in this.held
        ? { only: new Set([...this.held.only].filter((id) => !grown.has(id))) }
        : { except: grown.size === 0 ? this.held.except : new Set([...this.held.except, ...grown]) };
    const next = new PluginDataSnapshot([], held);
    next.fold = fold;
    return next;
  }

  /** Whether the snapshot holds all of the plugin's namespace (none of its rows left out). */
  covers(pluginId: string, namespace: string): boolean {
    const id = groupId(pluginId, namespace);
    return 'only' in this.held ? this.held.only.has(id) : !this.held.except.has(id);
  }

  get(pluginId: string, namespace: string, key: string): JsonValue | undefined {
    return this.fold.get(pluginId, namespace, key);
  }

  list(pluginId: string, namespace: string, options: { limit?: number } = {}): PluginDataRow[] {
    return this.fold.list(pluginId, namespace, options);
  }

  selfData(pluginId: string, namespace: string, options: { limit?: number } = {}): SelfDataView {
    return this.fold.selfData(pluginId, namespace, options);
  }
}

/** A row of `sessionPluginDataQuery`: a namespace's row (`taken`: the running bytes of values), or a large namespace without one. */
interface SessionPluginDataRow {
  plugin_id: string;
  namespace: string;
  row_count: number | string;
  key: string | null;
  value: JsonValue;
  created_position: number | string | null;
  updated_position: number | string | null;
  taken: number | string;
}

/** The statement of `readSessionPluginData`: rows by plugin, namespace and creation (a large namespace's as one row without a key). */
export function sessionPluginDataQuery(scope: { tenantId: string; sessionId: string }, bounds: SessionPluginDataBounds): RawBuilder<SessionPluginDataRow> {
  return sql<SessionPluginDataRow>`
    select plugin_id, namespace, row_count, key, case when taken <= ${bounds.bytes} then value end as value, created_position, updated_position, taken
    from (
      select n.plugin_id, n.namespace, n.row_count, d.key, d.value, d.created_position, d.updated_position,
        sum(coalesce(octet_length(d.value::text), 0))
          over (order by n.plugin_id, n.namespace, d.created_position rows between unbounded preceding and current row) as taken
      from plugin_data_namespaces n
      left join lateral (
        select key, value, created_position, updated_position from plugin_data d
        where d.session_id = n.session_id and d.plugin_id = n.plugin_id and d.namespace = n.namespace and d.tenant_id = n.tenant_id
        order by created_position
        limit case when n.row_count <= ${bounds.perNamespace} then ${bounds.perNamespace} else 0 end
      ) d on true
      where n.session_id = ${scope.sessionId} and n.tenant_id = ${scope.tenantId}
    ) as session_rows
    order by plugin_id, namespace, created_position
    limit ${bounds.rows + 1}`;
}

/**
 * The session's plugin data of one tenant in one statement (issue 33: a statement, and an autocommit
 * transaction, per key and namespace a turn's hooks and runtimes read before). Driven by the
 * session's namespaces (`plugin_data_namespaces`, by plugin and namespace): the rows of each
 * namespace of at most `bounds.perNamespace` rows, in creation order (index `plugin_data_created`);
 * a larger namespace comes back as one row without a key (not held: never read whole, spec §4). At
 * most `bounds.rows` rows, values only while their running size stays within `bounds.bytes` (a row
 * past it comes back without its value); the namespace the bounds cut into, and every one after it,
 * are not held (`covers` false).
 */
export async function readSessionPluginData(
  db: Kysely<Database>,
  scope: { tenantId: string; sessionId: string },
  bounds: SessionPluginDataBounds = SESSION_PLUGIN_DATA_BOUNDS,
): Promise<PluginDataSnapshot> {
  const { rows: found } = await sessionPluginDataQuery(scope, bounds).execute(db);
  return snapshotOfRows(found, bounds);
}

/**
 * `readSessionPluginData`'s statement as one JSON value (its rows, in its order), for a read beside
 * another in the same statement and snapshot (`EventStore.readPendingSuffix`'s `alongside`: the
 * turn step's read of the journal, issue 33); `sessionPluginDataOf` makes the snapshot of it.
 */
export function sessionPluginDataJson(
  scope: { tenantId: string; sessionId: string },
  bounds: SessionPluginDataBounds = SESSION_PLUGIN_DATA_BOUNDS,
): RawBuilder<unknown> {
  return sql`(select coalesce(json_agg(r order by r.plugin_id, r.namespace, r.created_position), '[]'::json) from (${sessionPluginDataQuery(scope, bounds)}) r)`;
}

/** The snapshot of what `sessionPluginDataJson` read (the same `bounds`): the one `readSessionPluginData` makes of the same rows. */
export function sessionPluginDataOf(json: unknown, bounds: SessionPluginDataBounds = SESSION_PLUGIN_DATA_BOUNDS): PluginDataSnapshot {
  return snapshotOfRows((json ?? []) as SessionPluginDataRow[], bounds);
}

function snapshotOfRows(found: readonly SessionPluginDataRow[], bounds: SessionPluginDataBounds): PluginDataSnapshot {
  const cut = found.findIndex((r, i) => i >= bounds.rows || Number(r.taken) > bounds.bytes);
  const taken = cut === -1 ? found : found.slice(0, cut);
  const held = taken.flatMap((r) =>
    r.key === null
      ? []
      : [
          {
            pluginId: r.plugin_id,
            namespace: r.namespace,
            key: r.key,
            value: r.value,
            created: Number(r.created_position),
            updated: Number(r.updated_position),
          },
        ],
  );
  // a namespace of more rows than one may bring: not held (nor, when rows were cut, the cut's namespace)
  const large = new Set(taken.filter((r) => Number(r.row_count) > bounds.perNamespace).map((r) => groupId(r.plugin_id, r.namespace)));
  if (cut === -1) return new PluginDataSnapshot(held, { except: large });
  const only = new Set(taken.map((r) => groupId(r.plugin_id, r.namespace)).filter((id) => !large.has(id)));
  only.delete(groupId(found[cut].plugin_id, found[cut].namespace));
  return new PluginDataSnapshot(held, { only });
}

/**
 * `value` as PostgreSQL's jsonb gives it back (the `plugin_data` projection's column): every
 * object's keys in jsonb's order, shorter keys first, then by their UTF-8 bytes (arrays keep theirs),
 * and -0 as 0.
 */
export function asJsonb(value: JsonValue): JsonValue {
  if (Array.isArray(value)) return value.map(asJsonb);
  // -0 is written as "0" (JSON text) and read back as 0
  if (typeof value === 'number') return value === 0 ? 0 : value;
  if (value === null || typeof value !== 'object') return value;
  // a key without a value is not in the JSON text the column was written from
  const keys = Object.entries(value)
    .filter((entry) => entry[1] !== undefined)
    .map(([key]) => ({ key, bytes: Buffer.from(key, 'utf8') }));
  keys.sort((a, b) => a.bytes.length - b.bytes.length || Buffer.compare(a.bytes, b.bytes));
  return Object.fromEntries(keys.map(({ key }) => [key, asJsonb((value as Record<string, JsonValue>)[key])]));
}
