import { type Kysely, sql } from 'kysely';

/**
 * Long-polling for a turn (`GET /v1/executions/:id?waitMs=`): when an execution ends (its row in
 * `executions` is inserted or updated to `committed` or `failed`), the transaction that does it
 * sends `pg_notify('covel_execution_ended', execution_id)`, delivered at its commit. The API's one
 * LISTEN connection wakes the waiters of that id (libs/events ExecutionWaiter). The WHEN clauses keep
 * every other write to the table free of the call; an update that keeps the status sends nothing.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create function executions_notify_ended() returns trigger language plpgsql as $$
    begin
      perform pg_notify('covel_execution_ended', new.execution_id);
      return null;
    end $$`.execute(db);
  await sql`
    create trigger executions_ended_on_insert after insert on executions
    for each row when (new.status in ('committed', 'failed'))
    execute function executions_notify_ended()`.execute(db);
  await sql`
    create trigger executions_ended_on_update after update of status on executions
    for each row when (new.status in ('committed', 'failed') and old.status is distinct from new.status)
    execute function executions_notify_ended()`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop trigger executions_ended_on_update on executions`.execute(db);
  await sql`drop trigger executions_ended_on_insert on executions`.execute(db);
  await sql`drop function executions_notify_ended()`.execute(db);
}
