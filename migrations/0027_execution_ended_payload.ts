import { type Kysely, sql } from 'kysely';

/**
 * An execution's end (`covel_execution_ended`, migrations 0010 and 0021) carries the execution's
 * row as it is at the commit (`row_to_json`, the columns of `executions`) instead of its id alone:
 * a long-poll (`GET /v1/executions/:id?waitMs=`) or a worker's watch is answered from the
 * notification with no read of its own (issue 33). The triggers fire at the commit (deferred
 * constraint triggers), so the row is the one every later read sees, whatever else the
 * transaction wrote to it. A row too long for a notification (PostgreSQL's limit is 8000 bytes:
 * a long error message) sends its id as before, and the listener reads it.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create or replace function executions_notify_ended() returns trigger language plpgsql as $$
    declare
      payload text;
    begin
      select row_to_json(x)::text into payload from executions x where x.execution_id = new.execution_id;
      if payload is null or octet_length(payload) > 7900 then
        payload := new.execution_id;
      end if;
      perform pg_notify('covel_execution_ended', payload);
      return null;
    end $$`.execute(db);
  await replaceTriggers(db, 'deferred');
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await replaceTriggers(db, 'immediate');
  await sql`
    create or replace function executions_notify_ended() returns trigger language plpgsql as $$
    begin
      perform pg_notify('covel_execution_ended', new.execution_id);
      return null;
    end $$`.execute(db);
}

const ENDED = `'committed', 'failed', 'cancelled'`;

async function replaceTriggers(db: Kysely<unknown>, when: 'deferred' | 'immediate'): Promise<void> {
  await sql`drop trigger executions_ended_on_update on executions`.execute(db);
  await sql`drop trigger executions_ended_on_insert on executions`.execute(db);
  const kind = when === 'deferred' ? sql.raw('constraint trigger') : sql.raw('trigger');
  const timing = when === 'deferred' ? sql.raw('deferrable initially deferred') : sql.raw('');
  await sql`
    create ${kind} executions_ended_on_insert after insert on executions ${timing}
    for each row when (new.status in (${sql.raw(ENDED)}))
    execute function executions_notify_ended()`.execute(db);
  await sql`
    create ${kind} executions_ended_on_update after update of status on executions ${timing}
    for each row when (new.status in (${sql.raw(ENDED)}) and old.status is distinct from new.status)
    execute function executions_notify_ended()`.execute(db);
}
