import { type Kysely, sql } from 'kysely';

/**
 * Usage metering (issue 32): the `usage` async projection of the model-call events.
 *
 * - `usage_daily`: answered model calls summed per tenant, UTC day (of the answer), stream, model and
 *   runtime. `stream_id` is the session's id, or a world generation job's (then `session_id` is
 *   null). One stream's rows are written by the one shard that owns its log partition. No cost is
 *   stored: the est. cost is priced when read (the prices in force), so a replay needs only the log.
 * - `usage_calls`: each call recorded (`llm.calling@1`, `compaction.summary-requested@1`,
 *   `world-generation.call-requested@1`): the model and runtime its answer is counted under, and
 *   whether an answer was counted. Only the first answer of a call counts, so the same events
 *   applied again (or a second answer of one call) add nothing.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table usage_daily (
      tenant_id text not null,
      day date not null,
      stream_id text not null,
      session_id text,
      model text not null,
      runtime text not null,
      calls integer not null,
      input_tokens bigint not null,
      cached_input_tokens bigint not null,
      output_tokens bigint not null,
      primary key (tenant_id, day, stream_id, model, runtime)
    )`.execute(db);
  // the operator's report across tenants reads a range of days
  await sql`create index usage_daily_day on usage_daily (day)`.execute(db);
  await sql`
    create table usage_calls (
      stream_id text not null,
      call_id text not null,
      tenant_id text not null,
      model text not null,
      runtime text not null,
      answered boolean not null,
      primary key (stream_id, call_id)
    )`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table usage_calls`.execute(db);
  await sql`drop table usage_daily`.execute(db);
}
