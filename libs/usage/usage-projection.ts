import { sql } from 'kysely';
import type { Projection, StoredEvent } from '../events';
import { answerOf, requestOf, USAGE_EVENT_TYPES } from './usage-plan';

/** The projection's name (its shards, its quarantine records, `npm run replay -- --projection usage`). */
export const USAGE_PROJECTION = 'usage';

/** A batch's requests (the calls they record) and answers (with their usage), each with its place in the batch. */
interface BatchCalls {
  requests: { streamId: string; callId: string; tenantId: string; model: string; runtime: string; ord: number }[];
  answers: {
    streamId: string;
    callId: string;
    tenantId: string;
    day: string;
    sessionId: string | null;
    inputTokens: number;
    cachedInputTokens: number;
    outputTokens: number;
    ord: number;
  }[];
}

function batchCalls(events: readonly StoredEvent[]): BatchCalls {
  const calls: BatchCalls = { requests: [], answers: [] };
  for (const [ord, e] of events.entries()) {
    const request = requestOf(e);
    if (request) calls.requests.push({ ...request, ord });
    const answer = answerOf(e);
    if (answer)
      calls.answers.push({
        streamId: e.streamId,
        callId: answer.callId,
        tenantId: e.tenantId,
        day: e.recordedAt.slice(0, 10),
        sessionId: answer.session ? e.streamId : null,
        ...answer.usage,
        ord,
      });
  }
  return calls;
}

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
 * A batch is ONE statement (issue 33: a read of the calls it names, then up to three writes, before),
 * whose text never changes: the requests and answers travel as arrays, one per column; its CTEs read
 * what earlier batches recorded of the calls, find each call's counted answer (`planUsage`'s rules,
 * in SQL), and write the sums, the earlier calls now counted and the calls recorded.
 */
export const usageProjection: Projection<'usage_daily' | 'usage_calls'> = {
  name: USAGE_PROJECTION,
  handles: USAGE_EVENT_TYPES,
  tables: ['usage_daily', 'usage_calls'],
  async applyBatch(trx, events) {
    const { requests: r, answers: a } = batchCalls(events);
    if (r.length === 0 && a.length === 0) return;
    await sql`
      with requests as (
        select * from unnest(
          ${r.map((c) => c.streamId)}::text[], ${r.map((c) => c.callId)}::text[], ${r.map((c) => c.tenantId)}::text[],
          ${r.map((c) => c.model)}::text[], ${r.map((c) => c.runtime)}::text[], ${r.map((c) => c.ord)}::int[]
        ) as r(stream_id, call_id, tenant_id, model, runtime, ord)
      ), answers as (
        select * from unnest(
          ${a.map((c) => c.streamId)}::text[], ${a.map((c) => c.callId)}::text[], ${a.map((c) => c.tenantId)}::text[],
          ${a.map((c) => c.day)}::date[], ${a.map((c) => c.sessionId)}::text[], ${a.map((c) => c.inputTokens)}::bigint[],
          ${a.map((c) => c.cachedInputTokens)}::bigint[], ${a.map((c) => c.outputTokens)}::bigint[], ${a.map((c) => c.ord)}::int[]
        ) as a(stream_id, call_id, tenant_id, day, session_id, input_tokens, cached_input_tokens, output_tokens, ord)
      ), first_requests as (
        -- a call is recorded by its first request (a later one changes nothing)
        select distinct on (stream_id, call_id) * from requests order by stream_id, call_id, ord
      ), known as (
        -- what earlier batches recorded of the calls this one names
        select k.* from usage_calls k
        where (k.stream_id, k.call_id) in (select stream_id, call_id from requests union select stream_id, call_id from answers)
      ), calls as (
        select coalesce(k.stream_id, f.stream_id) as stream_id, coalesce(k.call_id, f.call_id) as call_id,
          coalesce(k.tenant_id, f.tenant_id) as tenant_id, coalesce(k.model, f.model) as model, coalesce(k.runtime, f.runtime) as runtime,
          k.call_id is not null as known, coalesce(k.answered, false) as answered, f.ord as requested_at
        from known k full join first_requests f on f.stream_id = k.stream_id and f.call_id = k.call_id
      ), counted as (
        -- a call's first answer once it is recorded (earlier, or by a request before the answer), unless it was counted before
        select distinct on (a.stream_id, a.call_id) a.*, c.model, c.runtime, c.known
        from answers a join calls c on c.stream_id = a.stream_id and c.call_id = a.call_id
        where not c.answered and (c.known or a.ord > c.requested_at)
        order by a.stream_id, a.call_id, a.ord
      ), sums as (
        insert into usage_daily (tenant_id, day, stream_id, session_id, model, runtime, calls, input_tokens, cached_input_tokens, output_tokens)
        select tenant_id, day, stream_id, (array_agg(session_id order by ord))[1], model, runtime, count(*)::int,
          sum(input_tokens), sum(cached_input_tokens), sum(output_tokens)
        from counted group by tenant_id, day, stream_id, model, runtime
        on conflict (tenant_id, day, stream_id, model, runtime) do update set
          calls = usage_daily.calls + excluded.calls,
          input_tokens = usage_daily.input_tokens + excluded.input_tokens,
          cached_input_tokens = usage_daily.cached_input_tokens + excluded.cached_input_tokens,
          output_tokens = usage_daily.output_tokens + excluded.output_tokens
      ), answered as (
        update usage_calls u set answered = true from counted c where c.known and u.stream_id = c.stream_id and u.call_id = c.call_id
      ), recorded as (
        insert into usage_calls (stream_id, call_id, tenant_id, model, runtime, answered)
        select c.stream_id, c.call_id, c.tenant_id, c.model, c.runtime,
          exists (select 1 from counted n where n.stream_id = c.stream_id and n.call_id = c.call_id)
        from calls c where not c.known
        on conflict (stream_id, call_id) do nothing
      )
      select 1`.execute(trx);
  },
};
