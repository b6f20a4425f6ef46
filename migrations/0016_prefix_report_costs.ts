import { type Kysely, sql } from 'kysely';

/**
 * `prefix_reports` keeps each call's model and the output tokens the provider reported, so that the
 * sessions list sums a session's est. $ from its rows (one grouped read for the whole page, never
 * the calls' bodies). Rows written before are filled in once from the log (the last answer of a call).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table prefix_reports add column model text`.execute(db);
  await sql`alter table prefix_reports add column provider_output_tokens integer`.execute(db);
  await sql`
    update prefix_reports p set model = e.data->>'model'
    from events e
    where e.type = 'llm.calling@1' and e.tenant_id = p.tenant_id and e.data->>'callId' = p.call_id`.execute(db);
  await sql`
    update prefix_reports p
    set provider_output_tokens = (r.data->'usage'->>'outputTokens')::int
    from (
      select distinct on (tenant_id, data->>'callId') tenant_id, data
      from events where type = 'llm.responded@1'
      order by tenant_id, data->>'callId', global_position desc
    ) r
    where r.tenant_id = p.tenant_id and r.data->>'callId' = p.call_id`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table prefix_reports drop column provider_output_tokens`.execute(db);
  await sql`alter table prefix_reports drop column model`.execute(db);
}
