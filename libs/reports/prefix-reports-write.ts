import { sql, type Transaction } from 'kysely';
import type { Database } from '../events';
import type { NewPrefixReport, UsageUpdate } from './prefix-reports-plan';

/**
 * New rows in one statement whose text never changes (the parameters are one array per column, as
 * `applyUsage`'s): no query to build per batch, and one text for the pool to send as a named
 * prepared statement (issue 33: kysely building a 19-column multi-row insert was most of this
 * projection's CPU in a worker). A call id that has a row is left as it is.
 *
 * A row's `body` is its call's request body as the log holds it: the `body` of the `llm.calling@1`
 * event at the row's `position` (of the row's tenant and session), read by the statement. A body
 * is most of a turn's bytes; sent from here it was escaped into an array literal, then sent and
 * read again (issue 33: ~3 % of a worker's CPU on an Emberback turn). The text is the same: the
 * event's `body` is that text, as a JSON string of the log's data. A row whose event the log does
 * not hold there is not written.
 */
export async function insertReports(trx: Transaction<Database>, rows: readonly NewPrefixReport[]): Promise<void> {
  if (rows.length === 0) return;
  await insertSql(rows).execute(trx);
}

/**
 * A batch's writes in ONE statement (issue 33: two before, when it had both): the provider usage onto
 * rows of earlier batches and the new rows, as two data-modifying CTEs. Both see the rows as they were
 * before the statement, so a usage update never reaches a row inserted by it: a report that precedes
 * its call in the log matches no row, as applied one by one. Its text never changes (empty arrays
 * when one of the two has nothing).
 */
export async function writeReports(trx: Transaction<Database>, batch: { usage: readonly UsageUpdate[]; inserts: readonly NewPrefixReport[] }): Promise<void> {
  if (batch.usage.length === 0 && batch.inserts.length === 0) return;
  await sql`with usage as (${usageSql(batch.usage)}), inserted as (${insertSql(batch.inserts)}) select 1`.execute(trx);
}

/** The insert of new rows, their bodies read from the log (exported for the EXPLAIN test). */
export function insertSql(rows: readonly NewPrefixReport[]) {
  const column = <K extends keyof NewPrefixReport>(name: K) => rows.map((r) => r[name] ?? null);
  return sql`
    insert into prefix_reports (
      call_id, tenant_id, session_id, turn_id, turn, runtime, position, first_in_turn, protocol, body, layout, request_tokens,
      shared_tokens, shared_percent, first_difference, provider_cached_tokens, provider_input_tokens, model, provider_output_tokens
    )
    select u.call_id, u.tenant_id, u.session_id, u.turn_id, u.turn, u.runtime, u.position, u.first_in_turn, u.protocol, e.data->>'body', u.layout::jsonb,
      u.request_tokens, u.shared_tokens, u.shared_percent, u.first_difference::jsonb, u.provider_cached_tokens, u.provider_input_tokens,
      u.model, u.provider_output_tokens
    from unnest(
      ${column('call_id')}::text[], ${column('tenant_id')}::text[], ${column('session_id')}::text[], ${column('turn_id')}::text[],
      ${column('turn')}::int[], ${column('runtime')}::text[], ${column('position')}::bigint[], ${column('first_in_turn')}::boolean[],
      ${column('protocol')}::text[], ${column('layout')}::text[], ${column('request_tokens')}::int[],
      ${column('shared_tokens')}::int[], ${column('shared_percent')}::real[], ${column('first_difference')}::text[],
      ${column('provider_cached_tokens')}::int[], ${column('provider_input_tokens')}::int[], ${column('model')}::text[],
      ${column('provider_output_tokens')}::int[]
    ) with ordinality as u(
      call_id, tenant_id, session_id, turn_id, turn, runtime, position, first_in_turn, protocol, layout, request_tokens,
      shared_tokens, shared_percent, first_difference, provider_cached_tokens, provider_input_tokens, model, provider_output_tokens, n
    )
    -- the log row by its primary key alone (a subquery the planner keeps), then checked: joined on all
    -- three, a log without statistics was read through (tenant_id, stream_id), the whole session per row
    cross join lateral (select e.data, e.tenant_id, e.stream_id from events e where e.global_position = u.position offset 0) e
    where e.tenant_id = u.tenant_id and e.stream_id = u.session_id
    order by u.n
    on conflict (call_id) do nothing`;
}

/** Provider usage onto rows written before (the parameters are five arrays). */
function usageSql(updates: readonly UsageUpdate[]) {
  return sql`
    update prefix_reports p
    set provider_cached_tokens = u.cached_input_tokens, provider_input_tokens = u.input_tokens, provider_output_tokens = u.output_tokens
    from unnest(
      ${updates.map((u) => u.tenantId)}::text[], ${updates.map((u) => u.callId)}::text[],
      ${updates.map((u) => u.cachedInputTokens)}::int[], ${updates.map((u) => u.inputTokens)}::int[], ${updates.map((u) => u.outputTokens)}::int[]
    ) as u(tenant_id, call_id, cached_input_tokens, input_tokens, output_tokens)
    where p.call_id = u.call_id and p.tenant_id = u.tenant_id`;
}
