import { type Kysely, sql } from 'kysely';

/**
 * `tenant_limits`: each tenant's limits as they now are (inline, from `tenant.limits-changed@1` in the
 * tenant's stream `tenant:<tenantId>`): request rate, burst, executions in flight, spend budget.
 * A tenant without a row has the deployment's defaults.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table tenant_limits (
      stream_id text primary key,
      tenant_id text not null unique,
      limits jsonb not null,
      changed_by text not null,
      version integer not null,
      updated_at timestamptz not null
    )`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table tenant_limits`.execute(db);
}
