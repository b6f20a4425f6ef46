import { type Selectable, sql, type Transaction } from 'kysely';
import type { Database, Projection } from '../events';
import { callKey, callKeys, type KnownCall, planUsage, USAGE_EVENT_TYPES } from './usage-plan';

type Trx = Transaction<Database>;
type CallRef = { streamId: string; callId: string };

/** The projection's name (its shards, its quarantine records, `npm run replay -- --projection usage`). */
export const USAGE_PROJECTION = 'usage';

/**
 * `(stream_id, call_id) in (...)` for these calls. Every statement of a batch is one text whatever
 * its number of rows (the rows are arrays, one per column): none is built per batch, and the pool
 * sends each as a named prepared statement (issue 33: building them was most of this projection's CPU).
 */
const callsIn = (keys: readonly CallRef[]) =>
  sql<boolean>`(stream_id, call_id) in (select * from unnest(${keys.map((k) => k.streamId)}::text[], ${keys.map((k) => k.callId)}::text[]))`;

/**
 * `usage_daily`: every answered model call the engine recorded — runtimes' calls (`llm.responded@1`),
 * compaction summaries (`compaction.summary-responded@1`), world generation
 * (`world-generation.call-responded@1`) — summed per tenant, UTC day, stream, model and runtime. An
 * async projection: off the turn's path, rebuilt from the log by a replay, a stream's rows written by
 * the shard of its log partition only. A call counts once, at its first answer in the log, whatever
 * became of its turn (failed, cancelled, regenerated, reverted: the call was paid for); `usage_calls`
 * remembers each call and whether it was counted, so the same events applied again add nothing. A
 * call whose answer never reached the log (a worker killed between the answer and its append) is not
 * in it: the retry that calls again records, and counts, its own call.
 *
 * A batch costs at most four statements: one read of the calls it names, one upsert of the sums, one
 * update of the earlier calls it counts, one insert of the calls it records.
 */
export const usageProjection: Projection<'usage_daily' | 'usage_calls'> = {
  name: USAGE_PROJECTION,
  handles: USAGE_EVENT_TYPES,
  tables: ['usage_daily', 'usage_calls'],
  async applyBatch(trx, events) {
    const plan = planUsage(events, await loadCalls(trx, callKeys(events)));
    if (plan.increments.length > 0) {
      const rows = plan.increments;
      await sql`
        insert into usage_daily (tenant_id, day, stream_id, session_id, model, runtime, calls, input_tokens, cached_input_tokens, output_tokens)
        select * from unnest(
          ${rows.map((r) => r.tenantId)}::text[], ${rows.map((r) => r.day)}::date[], ${rows.map((r) => r.streamId)}::text[],
          ${rows.map((r) => r.sessionId)}::text[], ${rows.map((r) => r.model)}::text[], ${rows.map((r) => r.runtime)}::text[],
          ${rows.map((r) => r.calls)}::int[], ${rows.map((r) => r.inputTokens)}::bigint[], ${rows.map((r) => r.cachedInputTokens)}::bigint[],
          ${rows.map((r) => r.outputTokens)}::bigint[]
        )
        on conflict (tenant_id, day, stream_id, model, runtime) do update set
          calls = usage_daily.calls + excluded.calls,
          input_tokens = usage_daily.input_tokens + excluded.input_tokens,
          cached_input_tokens = usage_daily.cached_input_tokens + excluded.cached_input_tokens,
          output_tokens = usage_daily.output_tokens + excluded.output_tokens`.execute(trx);
    }
    if (plan.answered.length > 0) await sql`update usage_calls set answered = true where ${callsIn(plan.answered)}`.execute(trx);
    if (plan.recorded.length > 0) {
      const calls = plan.recorded;
      await sql`
        insert into usage_calls (stream_id, call_id, tenant_id, model, runtime, answered)
        select * from unnest(
          ${calls.map((c) => c.streamId)}::text[], ${calls.map((c) => c.callId)}::text[], ${calls.map((c) => c.tenantId)}::text[],
          ${calls.map((c) => c.model)}::text[], ${calls.map((c) => c.runtime)}::text[], ${calls.map((c) => c.answered)}::boolean[]
        )
        on conflict (stream_id, call_id) do nothing`.execute(trx);
    }
  },
};

/** What earlier batches recorded of these calls, by `callKey`. */
async function loadCalls(trx: Trx, keys: readonly CallRef[]): Promise<Map<string, KnownCall>> {
  if (keys.length === 0) return new Map();
  const { rows } = await sql<Selectable<Database['usage_calls']>>`select * from usage_calls where ${callsIn(keys)}`.execute(trx);
  return new Map(
    rows.map((r) => [
      callKey(r.stream_id, r.call_id),
      { streamId: r.stream_id, callId: r.call_id, tenantId: r.tenant_id, model: r.model, runtime: r.runtime, answered: r.answered },
    ]),
  );
}
