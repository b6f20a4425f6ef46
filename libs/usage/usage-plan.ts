import type { StoredEvent } from '../events';

/** A recorded call (`usage_calls`): the model and runtime its answer is counted under, and whether it was counted. */
export interface KnownCall {
  streamId: string;
  callId: string;
  tenantId: string;
  model: string;
  runtime: string;
  answered: boolean;
}

/** One `usage_daily` row's increments. */
export interface UsageIncrement {
  tenantId: string;
  /** `YYYY-MM-DD`, UTC, of the answer. */
  day: string;
  streamId: string;
  /** Null: not a session's call (world generation). */
  sessionId: string | null;
  model: string;
  runtime: string;
  calls: number;
  inputTokens: number;
  cachedInputTokens: number;
  outputTokens: number;
}

/** What a batch changes: the rows it adds to, the calls of earlier batches it counts, the calls it records. */
export interface UsagePlan {
  increments: UsageIncrement[];
  /** Calls recorded by earlier batches whose first answer is in this one (marked answered). */
  answered: { streamId: string; callId: string }[];
  /** Calls recorded in this batch (inserted; `answered` when their answer is in it too). */
  recorded: KnownCall[];
}

/** The model-call events the projection reads: each request with the answer that carries its usage. */
export const USAGE_EVENT_TYPES = [
  'llm.calling@1',
  'llm.responded@1',
  'compaction.summary-requested@1',
  'compaction.summary-responded@1',
  'world-generation.call-requested@1',
  'world-generation.call-responded@1',
] as const;

/** The runtime a compaction summary's call is counted under (`compaction:<the provider's plugin>`). */
export const compactionRuntime = (pluginId: string) => `compaction:${pluginId}`;
/** The runtime of a world generation job's calls. */
export const WORLD_GENERATION_RUNTIME = 'world-generation';

export const callKey = (streamId: string, callId: string) => `${streamId}\u0000${callId}`;

/** The call a request event records, or null for any other event. */
export function requestOf(e: StoredEvent): Omit<KnownCall, 'answered'> | null {
  const at = { streamId: e.streamId, tenantId: e.tenantId };
  if (e.type === 'llm.calling@1') return { ...at, callId: e.data.callId, model: e.data.model, runtime: `${e.data.pluginId}/${e.data.runtimeId}` };
  if (e.type === 'compaction.summary-requested@1') return { ...at, callId: e.data.requestId, model: e.data.model, runtime: compactionRuntime(e.data.pluginId) };
  if (e.type === 'world-generation.call-requested@1') return { ...at, callId: e.data.callId, model: e.data.model, runtime: WORLD_GENERATION_RUNTIME };
  return null;
}

/** The call an answer event answers, with its usage and whether its stream is a session; null for any other event. */
export function answerOf(e: StoredEvent) {
  if (e.type === 'llm.responded@1') return { callId: e.data.callId, usage: e.data.usage, session: true };
  if (e.type === 'compaction.summary-responded@1') return { callId: e.data.requestId, usage: e.data.usage, session: true };
  if (e.type === 'world-generation.call-responded@1') return { callId: e.data.callId, usage: e.data.usage, session: false };
  return null;
}

/** The calls a batch's requests and answers name (what `planUsage` needs to know of earlier batches), each once. */
export function callKeys(events: readonly StoredEvent[]): { streamId: string; callId: string }[] {
  const keys = new Map<string, { streamId: string; callId: string }>();
  for (const e of events) {
    const callId = requestOf(e)?.callId ?? answerOf(e)?.callId;
    if (callId !== undefined) keys.set(callKey(e.streamId, callId), { streamId: e.streamId, callId });
  }
  return [...keys.values()];
}

/**
 * The rows of applying the events one by one, in order (pure): a request records its call (once: a
 * call known already stays as it is); the first answer of a recorded call adds one call and its
 * usage to the row of (tenant, the answer's UTC day, stream, the request's model and runtime) and
 * marks the call answered. Any later answer of it, or an answer of no recorded call, adds nothing:
 * applying the same events again changes nothing. `known`: what earlier batches recorded of the
 * calls these events name (by `callKey`).
 */
export function planUsage(events: readonly StoredEvent[], known: ReadonlyMap<string, KnownCall>): UsagePlan {
  const recorded = new Map<string, KnownCall>();
  const answered: { streamId: string; callId: string }[] = [];
  const earlier = new Map([...known].map(([k, c]) => [k, { ...c }]));
  const rows = new Map<string, UsageIncrement>();
  for (const e of events) {
    const request = requestOf(e);
    if (request) {
      const key = callKey(request.streamId, request.callId);
      if (!earlier.has(key) && !recorded.has(key)) recorded.set(key, { ...request, answered: false });
      continue;
    }
    const answer = answerOf(e);
    if (!answer) continue;
    const key = callKey(e.streamId, answer.callId);
    const call = recorded.get(key) ?? earlier.get(key);
    if (!call || call.answered) continue;
    call.answered = true;
    if (!recorded.has(key)) answered.push({ streamId: call.streamId, callId: call.callId });
    const day = e.recordedAt.slice(0, 10);
    const rowKey = JSON.stringify([e.tenantId, day, e.streamId, call.model, call.runtime]);
    const row = rows.get(rowKey) ?? {
      tenantId: e.tenantId,
      day,
      streamId: e.streamId,
      sessionId: answer.session ? e.streamId : null,
      model: call.model,
      runtime: call.runtime,
      calls: 0,
      inputTokens: 0,
      cachedInputTokens: 0,
      outputTokens: 0,
    };
    row.calls += 1;
    row.inputTokens += answer.usage.inputTokens;
    row.cachedInputTokens += answer.usage.cachedInputTokens;
    row.outputTokens += answer.usage.outputTokens;
    rows.set(rowKey, row);
  }
  return { increments: [...rows.values()], answered, recorded: [...recorded.values()] };
}
