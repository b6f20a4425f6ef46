import { type Kysely, sql } from 'kysely';

/**
 * Stop (`POST /v1/executions/:id/cancel`): an execution can also end `cancelled`. Its end wakes the
 * same listeners as a commit or a failure (`covel_execution_ended`, migration 0010): the long-polls
 * of `GET /v1/executions/:id`, and the worker running it, which aborts its model call at once.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await replaceTriggers(db, `'committed', 'failed', 'cancelled'`);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await replaceTriggers(db, `'committed', 'failed'`);
}

async function replaceTriggers(db: Kysely<unknown>, ended: string): Promise<void> {
  await sql`drop trigger executions_ended_on_update on executions`.execute(db);
  await sql`drop trigger executions_ended_on_insert on executions`.execute(db);
  await sql`
    create trigger executions_ended_on_insert after insert on executions
    for each row when (new.status in (${sql.raw(ended)}))
    execute function executions_notify_ended()`.execute(db);
  await sql`
    create trigger executions_ended_on_update after update of status on executions
    for each row when (new.status in (${sql.raw(ended)}) and old.status is distinct from new.status)
    execute function executions_notify_ended()`.execute(db);
}
