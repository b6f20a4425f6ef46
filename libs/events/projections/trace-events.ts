import { type Kysely, sql } from 'kysely';
import type { StoredEvent } from '../event-types';
import { precompiled } from '../precompiled';
import type { Database } from '../schema';
import type { Projection } from './projection';

/** Rows of one statement, a column each: row i is the i-th element of every column. */
export type TraceColumns = {
  globalPositions: string[];
  tenantIds: string[];
  sessionIds: string[];
  executionIds: string[];
  turnIds: string[];
  types: string[];
  callIds: string[];
  pluginIds: string[];
  runtimeIds: string[];
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
  'recordedAts',
] as const;

/**
 * Every row of a batch in one statement (issue 33: a statement per model call's two events, up to
 * 20 an Emberback turn, was one round trip each). The rows travel as one array per column and
 * `unnest` makes them rows again, so the statement is the same text for any number of rows and is
 * compiled once (`precompiled`). Order of the rows is of no matter: `global_position` is the key.
 *
 * A row's `data` is its event's, read by the statement from the log row it was applied from (the
 * same tenant, stream and position): the event's data is the jsonb the log holds, and a request
 * body is the larger part of a turn's bytes. Sent from here it was the event's data written as
 * JSON text again, then escaped into an array literal (issue 33: ~3 % of a worker's CPU on an
 * Emberback turn). For every event this build appends the value stored is the same either way: the
 * log holds the data as the event's schema parsed it. An event appended by an older build with a
 * field its schema no longer has keeps that field here (before, re-serialising the parsed event
 * dropped it); the log row is the record, so the trace shows what was logged.
 *
 * The log row is found by its primary key alone, in a subquery the planner may not flatten (`offset
 * 0`); its tenant and stream are checked on the row found. Joined on all three at once, the planner
 * took the (tenant_id, stream_id) index whenever the table had no statistics yet (a new or lightly
 * written log; autovacuum off) and read the session's whole stream for each row, filtering on the
 * position (issue 33: ~400 index entries and heap rows per trace row on a 200-turn session, the
 * largest share of the server's buffer reads per turn). Exported for the EXPLAIN test.
 */
export const traceInsertQuery = (db: Kysely<Database>, p: TraceColumns) =>
  db
    .insertInto('trace_events')
    .columns(['global_position', 'tenant_id', 'session_id', 'execution_id', 'turn_id', 'type', 'call_id', 'plugin_id', 'runtime_id', 'data', 'recorded_at'])
    .expression(
      sql`select r.global_position, r.tenant_id, r.session_id, r.execution_id, r.turn_id, r.type, r.call_id, r.plugin_id, r.runtime_id, e.data, r.recorded_at
        from unnest(
          ${p.globalPositions}::bigint[], ${p.tenantIds}::text[], ${p.sessionIds}::text[], ${p.executionIds}::text[], ${p.turnIds}::text[],
          ${p.types}::text[], ${p.callIds}::text[], ${p.pluginIds}::text[], ${p.runtimeIds}::text[], ${p.recordedAts}::timestamptz[]
        ) as r(global_position, tenant_id, session_id, execution_id, turn_id, type, call_id, plugin_id, runtime_id, recorded_at)
        cross join lateral (select e.data, e.tenant_id, e.stream_id from events e where e.global_position = r.global_position offset 0) e
        where e.tenant_id = r.tenant_id and e.stream_id = r.session_id`,
    )
    .onConflict((oc) => oc.column('global_position').doNothing());

/** `traceInsertQuery` compiled once (`precompiled`). */
const insertTraces = precompiled<Database, TraceColumns>(COLUMNS, traceInsertQuery);

/** A statement closes at this many rows (a batch of more is sent in a few statements of bounded size). */
const MAX_ROWS = 500;

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
    for (const event of events) {
      if (event.type !== 'llm.calling@1' && event.type !== 'llm.responded@1') continue;
      if (rows.globalPositions.length >= MAX_ROWS) {
        await insertTraces(trx, rows);
        rows = emptyColumns();
      }
      add(rows, event);
    }
    if (rows.globalPositions.length > 0) await insertTraces(trx, rows);
  },
};

function add(rows: TraceColumns, event: StoredEvent): void {
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
  rows.recordedAts.push(new Date(event.recordedAt).toISOString());
}
