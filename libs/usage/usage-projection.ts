import { sql, type Transaction } from 'kysely';
import type { Database, Projection } from '../events';
import { callKey, callKeys, type KnownCall, planUsage, USAGE_EVENT_TYPES } from './usage-plan';

type Trx = Transaction<Database>;
type CallRef = { streamId: string; callId: string };

/** The projection's name (its shards, its quarantine records, `npm run replay -- --projection usage`). */
export const USAGE_PROJECTION = 'usage';

/** `(stream_id, call_id) in (...)` for these calls. */
const callsIn = (keys: readonly CallRef[]) => sql<boolean>`(stream_id, call_id) in (${sql.join(keys.map((k) => sql`(${k.streamId}, ${k.callId})`))})`;

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
      await trx
        .insertInto('usage_daily')
        .values(
          plan.increments.map((r) => ({
            tenant_id: r.tenantId,
            day: r.day,
            stream_id: r.streamId,
            session_id: r.sessionId,
            model: r.model,
            runtime: r.runtime,
            calls: r.calls,
            input_tokens: r.inputTokens,
            cached_input_tokens: r.cachedInputTokens,
            output_tokens: r.outputTokens,
          })),
        )
        .onConflict((oc) =>
          oc.columns(['tenant_id', 'day', 'stream_id', 'model', 'runtime']).doUpdateSet({
            calls: sql`usage_daily.calls + excluded.calls`,
            input_tokens: sql`usage_daily.input_tokens + excluded.input_tokens`,
            cached_input_tokens: sql`usage_daily.cached_input_tokens + excluded.cached_input_tokens`,
            output_tokens: sql`usage_daily.output_tokens + excluded.output_tokens`,
          }),
        )
        .execute();
    }
    if (plan.answered.length > 0) await trx.updateTable('usage_calls').set({ answered: true }).where(callsIn(plan.answered)).execute();
    if (plan.recorded.length > 0) {
      await trx
        .insertInto('usage_calls')
        .values(
          plan.recorded.map((c) => ({
            stream_id: c.streamId,
            call_id: c.callId,
            tenant_id: c.tenantId,
            model: c.model,
            runtime: c.runtime,
            answered: c.answered,
          })),
        )
        .onConflict((oc) => oc.columns(['stream_id', 'call_id']).doNothing())
        .execute();
    }
  },
};

/** What earlier batches recorded of these calls, by `callKey`. */
async function loadCalls(trx: Trx, keys: readonly CallRef[]): Promise<Map<string, KnownCall>> {
  if (keys.length === 0) return new Map();
  const rows = await trx.selectFrom('usage_calls').selectAll().where(callsIn(keys)).execute();
  return new Map(
    rows.map((r) => [
      callKey(r.stream_id, r.call_id),
      { streamId: r.stream_id, callId: r.call_id, tenantId: r.tenant_id, model: r.model, runtime: r.runtime, answered: r.answered },
    ]),
  );
}
