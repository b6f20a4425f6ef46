import { type Kysely, sql } from 'kysely';

/** Projections derived only from events, each with a checkpoint (last applied global position). */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table projection_checkpoints (
      name text primary key,
      position bigint not null default 0
    )`.execute(db);
  await sql`
    create table executions (
      execution_id text primary key,
      tenant_id text not null,
      session_id text not null,
      turn_id text not null,
      status text not null,
      attempts integer not null default 0,
      worker_id text,
      submitted_version integer not null,
      error_code text,
      error_message text,
      submitted_at timestamptz not null,
      updated_at timestamptz not null
    )`.execute(db);
  await sql`create index executions_pending on executions (status, updated_at) where status in ('queued', 'running')`.execute(db);
  await sql`create index executions_session on executions (session_id, submitted_version)`.execute(db);
  await sql`
    create table turn_messages (
      message_id text primary key,
      tenant_id text not null,
      session_id text not null,
      turn_id text not null,
      execution_id text not null,
      ord integer not null,
      role text not null,
      source_type text not null,
      plugin_id text,
      runtime_id text,
      output_kind text,
      text text not null,
      compacted boolean not null default false,
      committed_at timestamptz not null,
      constraint turn_messages_session_ord unique (session_id, ord)
    )`.execute(db);
  await sql`
    create table trace_events (
      global_position bigint primary key,
      tenant_id text not null,
      session_id text not null,
      execution_id text not null,
      turn_id text not null,
      type text not null,
      call_id text not null,
      plugin_id text not null,
      runtime_id text not null,
      data jsonb not null,
      recorded_at timestamptz not null
    )`.execute(db);
  await sql`create index trace_events_session on trace_events (session_id, global_position)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table trace_events, turn_messages, executions, projection_checkpoints`.execute(db);
}
