import { sql } from 'kysely';
import type { StoredEvent } from '../event-types';
import { precompiled } from '../precompiled';
import type { Database } from '../schema';
import type { Projection } from './projection';

/** Rows of one statement, a column each: row i is the i-th element of every column. */
type TraceColumns = {
  globalPositions: string[];
  tenantIds: string[];
  sessionIds: string[];
  executionIds: string[];
  turnIds: string[];
  types: string[];
  callIds: string[];
  pluginIds: string[];
  runtimeIds: string[];
  data: string[];
  recordedAts: string[];
};

const COLUMNS = [
  'globalPositions',
  'tenantIds',
  'sessionIds',
  'executionIds',
  'turnIds',
  'types',
  'callIds',
  'pluginIds',
  'runtimeIds',
  'data',
  'recordedAts',
] as const;

/**
 * Every row of a batch in one statement (issue 33: a statement per model call's two events, up to
 * 20 an Emberback turn, was one round trip each). The rows travel as one array per column and
 * `unnest` makes them rows again, so the statement is the same text for any number of rows and is
 * compiled once (`precompiled`). Order of the rows is of no matter: `global_position` is the key.
 */
const insertTraces = precompiled<Database, TraceColumns>(COLUMNS, (db, p) =>
  db
    .insertInto('trace_events')
    .columns(['global_position', 'tenant_id', 'session_id', 'execution_id', 'turn_id', 'type', 'call_id', 'plugin_id', 'runtime_id', 'data', 'recorded_at'])
    .expression(
      sql`select r.global_position, r.tenant_id, r.session_id, r.execution_id, r.turn_id, r.type, r.call_id, r.plugin_id, r.runtime_id, r.data::jsonb, r.recorded_at
        from unnest(
          ${p.globalPositions}::bigint[], ${p.tenantIds}::text[], ${p.sessionIds}::text[], ${p.executionIds}::text[], ${p.turnIds}::text[],
          ${p.types}::text[], ${p.callIds}::text[], ${p.pluginIds}::text[], ${p.runtimeIds}::text[], ${p.data}::text[], ${p.recordedAts}::timestamptz[]
        ) as r(global_position, tenant_id, session_id, execution_id, turn_id, type, call_id, plugin_id, runtime_id, data, recorded_at)`,
    )
    .onConflict((oc) => oc.column('global_position').doNothing()),
);

/**
 * A statement closes at this many rows or this many UTF-16 units of `data` (a request body can be
 * large: a batch of them is sent in a few statements of bounded size, never one of any size).
 */
const MAX_ROWS = 500;
const MAX_DATA_UNITS = 8 * 1024 * 1024;

const emptyColumns = (): TraceColumns => ({
  globalPositions: [],
  tenantIds: [],
  sessionIds: [],
  executionIds: [],
  turnIds: [],
  types: [],
  callIds: [],
  pluginIds: [],
  runtimeIds: [],
  data: [],
  recordedAts: [],
});

/**
 * `trace_events`: every `llm.calling` (with the exact request body) and `llm.responded`. A batch
 * is one insert (or a few, for a very large one); when it fails the projector applies its events
 * one by one (a batch of one: the same statement with one row), so the event that fails is found.
 */
export const traceEventsProjection: Projection = {
  name: 'trace_events',
  handles: ['llm.calling@1', 'llm.responded@1'],
  tables: ['trace_events'],
  async applyBatch(trx, events) {
    let rows = emptyColumns();
    let units = 0;
    for (const event of events) {
      const data = traceData(event);
      if (data === undefined) continue;
      if (rows.data.length > 0 && (rows.data.length >= MAX_ROWS || units + data.length > MAX_DATA_UNITS)) {
        await insertTraces(trx, rows);
        [rows, units] = [emptyColumns(), 0];
      }
      add(rows, event, data);
      units += data.length;
    }
    if (rows.data.length > 0) await insertTraces(trx, rows);
  },
};

/** The row's `data` (the event's data as JSON text), for the two traced types; undefined for any other. */
function traceData(event: StoredEvent): string | undefined {
  if (event.type !== 'llm.calling@1' && event.type !== 'llm.responded@1') return undefined;
  return JSON.stringify(event.data);
}

function add(rows: TraceColumns, event: StoredEvent, data: string): void {
  if (event.type !== 'llm.calling@1' && event.type !== 'llm.responded@1') return;
  rows.globalPositions.push(String(event.globalPosition));
  rows.tenantIds.push(event.tenantId);
  rows.sessionIds.push(event.streamId);
  rows.executionIds.push(event.data.executionId);
  rows.turnIds.push(event.data.turnId);
  rows.types.push(event.type);
  rows.callIds.push(event.data.callId);
  rows.pluginIds.push(event.data.pluginId);
  rows.runtimeIds.push(event.data.runtimeId);
  rows.data.push(data);
  rows.recordedAts.push(new Date(event.recordedAt).toISOString());
}
