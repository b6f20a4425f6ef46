/** What plugin data reads return, and the shape of the bounded selfData read (spec §4 "io.selfData"). */

/** A JSON value as `plugin-data.written@1` holds it. */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

/** Every read is scoped to one tenant, one session and one plugin. */
export interface PluginDataScope {
  tenantId: string;
  sessionId: string;
  pluginId: string;
}

export interface PluginDataRow {
  key: string;
  value: JsonValue;
}

/** The bounded projection of one namespace; structurally `SelfDataBlock` of libs/context. */
export interface SelfDataView {
  namespace: string;
  rows: PluginDataRow[];
  /** Rows in the namespace, all of them (the truncation note states it when rows were left out). */
  totalRows: number;
}

/** Spec §4: 50 rows unless the runtime's `io.selfData` entry gives a limit. */
export const DEFAULT_SELF_DATA_LIMIT = 50;
export const MAX_SELF_DATA_LIMIT = 1000;
export const DEFAULT_LIST_LIMIT = 100;
export const MAX_LIST_LIMIT = 1000;

/**
 * A selfData limit split into anchors (the earliest rows by creation: ceil(limit / 2)) and recent
 * rows (the most recently updated of the others: the rest). Throws a RangeError for a limit that
 * is not an integer in 1..MAX_SELF_DATA_LIMIT.
 */
export function selfDataSplit(limit: number): { anchors: number; recent: number } {
  checkLimit('selfData', limit, MAX_SELF_DATA_LIMIT);
  const anchors = Math.ceil(limit / 2);
  return { anchors, recent: limit - anchors };
}

export function checkLimit(what: string, limit: number, max: number): void {
  if (!Number.isInteger(limit) || limit < 1 || limit > max) throw new RangeError(`${what} limit must be an integer from 1 to ${max}, got ${limit}`);
}
