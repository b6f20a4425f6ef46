import { sql, type Transaction } from 'kysely';
import type { Database } from '../events';
import type { NewPrefixReport, UsageUpdate } from './prefix-reports-plan';

/** PostgreSQL's limit on the parameters of one statement. */
const MAX_PARAMETERS = 65_535;
const COLUMNS = 19;
/** Rows per insert statement, so that one never exceeds `MAX_PARAMETERS`. */
export const INSERT_CHUNK = Math.floor(MAX_PARAMETERS / COLUMNS);

/** New rows in multi-row inserts (one per `INSERT_CHUNK` rows); a call id that has a row is left as it is. */
export async function insertReports(trx: Transaction<Database>, rows: readonly NewPrefixReport[]): Promise<void> {
  for (let at = 0; at < rows.length; at += INSERT_CHUNK) {
    await trx
      .insertInto('prefix_reports')
      .values(rows.slice(at, at + INSERT_CHUNK))
      .onConflict((oc) => oc.column('call_id').doNothing())
      .execute();
  }
}

/** Provider usage onto rows written before, in one statement (the parameters are five arrays). */
export async function applyUsage(trx: Transaction<Database>, updates: readonly UsageUpdate[]): Promise<void> {
  if (updates.length === 0) return;
  await sql`
    update prefix_reports p
    set provider_cached_tokens = u.cached_input_tokens, provider_input_tokens = u.input_tokens, provider_output_tokens = u.output_tokens
    from unnest(
      ${updates.map((u) => u.tenantId)}::text[], ${updates.map((u) => u.callId)}::text[],
      ${updates.map((u) => u.cachedInputTokens)}::int[], ${updates.map((u) => u.inputTokens)}::int[], ${updates.map((u) => u.outputTokens)}::int[]
    ) as u(tenant_id, call_id, cached_input_tokens, input_tokens, output_tokens)
    where p.call_id = u.call_id and p.tenant_id = u.tenant_id`.execute(trx);
}
