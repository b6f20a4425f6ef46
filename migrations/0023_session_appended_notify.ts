import { type Kysely, sql } from 'kysely';

/**
 * Live event streams (`GET /v1/sessions/:id/events`) are woken by the log instead of polling it:
 * every statement that appends events sends `pg_notify('covel_session_appended', stream_id)`
 * once per stream it appended to, delivered at its commit (so a woken reader sees the events).
 * The API's one LISTEN connection for this channel wakes the streams of that session
 * (libs/events SessionAppends). A statement-level trigger with a transition table: one call per
 * append, whatever the number of events; PostgreSQL folds equal notifications of a transaction.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create function events_notify_appended() returns trigger language plpgsql as $$
    declare
      stream text;
    begin
      for stream in select distinct stream_id from appended loop
        perform pg_notify('covel_session_appended', stream);
      end loop;
      return null;
    end $$`.execute(db);
  await sql`
    create trigger events_appended after insert on events
    referencing new table as appended
    for each statement execute function events_notify_appended()`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop trigger events_appended on events`.execute(db);
  await sql`drop function events_notify_appended()`.execute(db);
}
