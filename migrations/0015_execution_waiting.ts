import { type Kysely, sql } from 'kysely';

/**
 * What a waiting execution waits for (`execution.suspended@1` waitingFor, as JSON text), null when
 * it waits for nothing: a runtime of it suspended on a tool until `POST /v1/executions/:id/resume`.
 * The status stays `running` (the session still waits on it); the API shows `waiting`.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table executions add column waiting_for text`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table executions drop column waiting_for`.execute(db);
}
