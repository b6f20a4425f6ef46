import { type Kysely, sql } from 'kysely';

/**
 * `world_generations`: each world generation job as it now stands (inline, from the job's stream of
 * `world-generation.*` events; the stream id is the job id). Read by the progress routes (tenant
 * and job), and by the sweeper for the jobs still running (no progress for a while: enqueued again).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table world_generations (
      job_id text primary key,
      tenant_id text not null,
      status text not null,
      round integer not null,
      rounds integer not null,
      world_id text,
      error_code text,
      error_reason text,
      created_at timestamptz not null,
      updated_at timestamptz not null
    )`.execute(db);
  // the sweeper's pass: the jobs not ended yet, oldest progress first
  await sql`create index world_generations_pending on world_generations (updated_at) where status not in ('done', 'failed')`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table world_generations`.execute(db);
}
