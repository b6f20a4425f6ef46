import { type Kysely, sql } from 'kysely';

/**
 * `projection_failures`: a (projection, stream) whose event the projection could not apply. The
 * projection goes on with every other stream and skips this stream's later events until a retry
 * applies them all, in order; then the row is deleted.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table projection_failures (
      projection text not null,
      stream_id text not null,
      tenant_id text not null,
      global_position bigint not null,
      event_type text not null,
      error text not null,
      attempts integer not null default 1,
      first_seen_at timestamptz not null default now(),
      last_seen_at timestamptz not null default now(),
      next_retry_at timestamptz not null,
      primary key (projection, stream_id)
    )`.execute(db);
  await sql`create index projection_failures_stream on projection_failures (stream_id)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table projection_failures`.execute(db);
}
