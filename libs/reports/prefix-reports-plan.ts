import type { Insertable } from 'kysely';
import type { Database, StoredEvent } from '../events';
import { compareMeasured, measureRequest } from './prefix-compare';
import {
  beforeKey,
  bodyFingerprint,
  type CallKey,
  emptySession,
  type FirstRequest,
  type PrefixState,
  type SessionState,
  seenKey,
  sessionKey,
} from './prefix-reports-state';

/** A new row; its `body` is read from the log by the write (`insertReports`: its call's `llm.calling@1` at `position`). */
export type NewPrefixReport = Omit<Insertable<Database['prefix_reports']>, 'body'>;

/** Usage reported for a call whose row is not among the batch's new rows. */
export interface UsageUpdate {
  tenantId: string;
  callId: string;
  cachedInputTokens: number;
  inputTokens: number;
  outputTokens: number;
}

export interface PrefixReportsPlan {
  /** New rows, in event order; at most one per call id, none for a call id that has a row. */
  inserts: NewPrefixReport[];
  /** The last usage reported per call, for rows written before this batch (or not at all). */
  usage: UsageUpdate[];
}

const runtimeOf = (d: { pluginId: string; runtimeId: string }) => `${d.pluginId}/${d.runtimeId}`;

/** The calls the `llm.calling@1` events of a batch record, for `loadPrefixState`. */
export function callKeys(events: readonly StoredEvent[]): CallKey[] {
  const keys: CallKey[] = [];
  for (const e of events) {
    if (e.type !== 'llm.calling@1') continue;
    const { turnId, callId, retryFromTurnId } = e.data;
    keys.push({
      tenantId: e.tenantId,
      sessionId: e.streamId,
      turnId,
      runtime: runtimeOf(e.data),
      callId,
      ...(retryFromTurnId !== undefined ? { retryFromTurnId } : {}),
    });
  }
  return keys;
}

/**
 * Walks a batch in log order against `state` (which it updates), giving the rows and usage updates
 * that applying the events one by one would write:
 * - `llm.calling@1`: the turn number of its turn id in the session (or the session's highest turn
 *   number + 1), first in turn when its runtime has no row in that turn yet, and then compared with
 *   the runtime's latest first-in-turn request; a call id that has a row is skipped. A regenerated
 *   turn's call (`retryFromTurnId`) takes the number of the turn it replaces and is compared with the
 *   runtime's latest first-in-turn request of a turn before that one (not with the replaced turn);
 * - `llm.responded@1`: its usage lands on the call's new row when the batch wrote it already,
 *   otherwise it is an update of an earlier row (matching none when there is none).
 */
export function planPrefixReports(events: readonly StoredEvent[], state: PrefixState): PrefixReportsPlan {
  const pending = new Map<string, NewPrefixReport>();
  const usage = new Map<string, UsageUpdate>();
  for (const event of events) {
    if (event.type === 'llm.responded@1') {
      const { callId, usage: u } = event.data;
      const row = pending.get(callId);
      if (row && row.tenant_id === event.tenantId) {
        row.provider_cached_tokens = u.cachedInputTokens;
        row.provider_input_tokens = u.inputTokens;
        row.provider_output_tokens = u.outputTokens;
      } else {
        const key = JSON.stringify([event.tenantId, callId]);
        usage.delete(key); // the last report of a call is the one that stays
        usage.set(key, { tenantId: event.tenantId, callId, cachedInputTokens: u.cachedInputTokens, inputTokens: u.inputTokens, outputTokens: u.outputTokens });
      }
      continue;
    }
    if (event.type !== 'llm.calling@1') continue;
    const d = event.data;
    const runtime = runtimeOf(d);
    const key = sessionKey(event.tenantId, event.streamId);
    const session = state.sessions.get(key) ?? emptySession();
    state.sessions.set(key, session);
    const replaced = d.retryFromTurnId === undefined ? undefined : session.turnOf.get(d.retryFromTurnId);
    const turn = session.turnOf.get(d.turnId) ?? replaced ?? session.turns + 1;
    const firstInTurn = !session.seen.has(seenKey(d.turnId, runtime));
    const current = measureRequest({ protocol: d.provider, body: JSON.parse(d.body) as Record<string, unknown>, layout: d.layout });
    const earlier = firstInTurn && replaced !== undefined ? latestBefore(session, runtime, d.retryFromTurnId!, replaced) : undefined;
    // a regeneration of this regeneration (later in the batch) has the same turn before it
    if (earlier) session.before.set(beforeKey(runtime, d.turnId), earlier);
    const previous = !firstInTurn ? undefined : replaced === undefined ? session.previous.get(runtime) : earlier;
    if (state.existing.has(d.callId) || pending.has(d.callId)) continue; // the insert would do nothing
    // compared with the previous one when there is one; the request tokens are the request's own
    const figures = previous ? compareMeasured(previous.request, current) : null;
    pending.set(d.callId, {
      call_id: d.callId,
      tenant_id: event.tenantId,
      session_id: event.streamId,
      turn_id: d.turnId,
      turn,
      runtime,
      position: String(event.globalPosition),
      first_in_turn: firstInTurn,
      protocol: d.provider,
      layout: d.layout ? JSON.stringify(d.layout) : null,
      request_tokens: current.requestTokens,
      shared_tokens: figures ? figures.sharedTokens : null,
      shared_percent: figures ? figures.sharedPercent : null,
      first_difference: figures?.firstDifference ? JSON.stringify(figures.firstDifference) : null,
      provider_cached_tokens: null,
      provider_input_tokens: null,
      model: d.model,
      provider_output_tokens: null,
    });
    if (!session.turnOf.has(d.turnId)) {
      session.turnOf.set(d.turnId, turn);
      session.turns = Math.max(session.turns, turn);
    }
    session.seen.add(seenKey(d.turnId, runtime));
    if (firstInTurn) session.planned.push({ runtime, turn, position: event.globalPosition, request: current });
    const latest = session.previous.get(runtime);
    if (firstInTurn && !(latest && latest.position > event.globalPosition)) {
      session.previous.set(runtime, { callId: d.callId, position: event.globalPosition, bodyMd5: bodyFingerprint(d.body), request: current });
    }
  }
  return { inserts: [...pending.values()], usage: [...usage.values()] };
}

/**
 * The runtime's latest first-in-turn request of a turn before `replacedTurn` (the number of the turn a
 * regeneration replaces): of the rows before the batch, or planned by it.
 */
function latestBefore(session: SessionState, runtime: string, replacedTurnId: string, replacedTurn: number): FirstRequest | undefined {
  // the replaced turn's own rows may be in this batch: then the latest row before the batch is before it too
  let best = session.before.get(beforeKey(runtime, replacedTurnId));
  const loaded = session.loaded.get(runtime);
  if (loaded && loaded.turn < replacedTurn && (best === undefined || loaded.position > best.position)) best = loaded;
  for (const p of session.planned) {
    if (p.runtime === runtime && p.turn < replacedTurn && (best === undefined || p.position > best.position)) best = p;
  }
  return best !== undefined && best.turn < replacedTurn ? best : undefined;
}
