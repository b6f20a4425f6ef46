import { type Kysely, sql } from 'kysely';
import type { Database } from '../../libs/events';

/** Every row of every projection table, in a fixed order, for exact comparisons. */
export async function dumpProjections(db: Kysely<Database>) {
  const q = async (text: string) => (await sql.raw(text).execute(db)).rows;
  return {
    turn_messages: await q('select * from turn_messages order by session_id, ord'),
    trace_events: await q('select * from trace_events order by global_position'),
    executions: await q('select * from executions order by execution_id'),
    summaries: await q('select * from summaries order by session_id, seq'),
    history_watermarks: await q('select * from history_watermarks order by session_id'),
    prefix_reports: await q('select * from prefix_reports order by call_id'),
    plugin_data: await q('select * from plugin_data order by session_id, plugin_id, namespace, created_position'),
    plugin_data_namespaces: await q('select * from plugin_data_namespaces order by session_id, plugin_id, namespace'),
    usage_daily: await q('select * from usage_daily order by tenant_id, day, stream_id, model, runtime'),
    usage_calls: await q('select * from usage_calls order by stream_id, call_id'),
  };
}
