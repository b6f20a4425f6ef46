import { createHash } from 'node:crypto';
import type { Transaction } from 'kysely';
import type { Database } from '../events';
import { BoundedMemo } from '../memo';
import { type MeasuredRequest, measureRequest, type RecordedRequest } from './prefix-compare';
import { type CallKey, type KnownFirst, prefixStateQuery } from './prefix-state-query';

export type { CallKey };

/** A first-in-turn request of a runtime, with its turn number (what a regenerated turn is compared with). */
export interface FirstRequest {
  turn: number;
  position: number;
  request: MeasuredRequest;
}

/** A runtime's latest first-in-turn request: its call and position, its body's fingerprint, measured. */
export interface LatestFirst {
  callId: string;
  position: number;
  /** `bodyFingerprint` of the request's body: the read matches the row's by it too (one process may hold several logs). */
  bodyMd5: string;
  request: MeasuredRequest;
}

/** The MD5 (hex) of a body's UTF-8 bytes: PostgreSQL's `md5(body)` of the same text. */
export const bodyFingerprint = (body: string) => createHash('md5').update(body, 'utf8').digest('hex');

/** A session's `prefix_reports` as far as the calls of a batch need it; updated as the batch adds rows. */
export interface SessionState {
  /** The highest turn number of the session's rows (a regenerated turn takes the number of the turn it replaces). */
  turns: number;
  /** The turn number of each turn id the batch names that has a row. */
  turnOf: Map<string, number>;
  /** `turnId runtime` pairs (see `seenKey`) that have a row. */
  seen: Set<string>;
  /** Per runtime, the first-in-turn row with the highest position: what the next turn is compared with. */
  previous: Map<string, LatestFirst>;
  /**
   * For a regenerated turn's runtime (`beforeKey`): the latest first-in-turn request of rows written
   * before the batch whose turn comes before the replaced turn's.
   */
  before: Map<string, FirstRequest>;
  /** Per runtime, the latest first-in-turn request of rows before the batch, with its turn number. */
  loaded: Map<string, FirstRequest>;
  /** First-in-turn requests the batch has planned so far, in log order. */
  planned: (FirstRequest & { runtime: string })[];
}

export interface PrefixState {
  /** Per `sessionKey`, every session the batch's calls name (a session without rows is empty). */
  sessions: Map<string, SessionState>;
  /** Call ids of the batch that already have a row: their insert does nothing (`on conflict (call_id)`). */
  existing: Set<string>;
}

export const sessionKey = (tenantId: string, sessionId: string) => JSON.stringify([tenantId, sessionId]);
export const seenKey = (turnId: string, runtime: string) => JSON.stringify([turnId, runtime]);
export const beforeKey = (runtime: string, replacedTurnId: string) => JSON.stringify([runtime, replacedTurnId]);

const runtimeKey = (tenantId: string, sessionId: string, runtime: string) => JSON.stringify([tenantId, sessionId, runtime]);

/**
 * Per (tenant, session, runtime), the latest first-in-turn request this process planned or read,
 * measured: what the next turn's request of the runtime is compared with. The state's read sends
 * the call and position of each it holds for the batch's runtimes and gets the body back only when
 * the latest row is another one (issue 33: each turn read back, unescaped and parsed again every
 * runtime's previous request, ~10 KB each). A row's body is its call's event's (at its position),
 * which never changes; the read matches the body's fingerprint too, so a process that holds several
 * logs (tests, tools) cannot take one log's request for another's: only ever a shortcut, the same
 * figures either way. An entry holds its request's unit texts (about its body's length): 256 of
 * ~10-50 KB bodies are ~5-25 MB at most.
 */
const measuredFirsts = new BoundedMemo<string, LatestFirst>({ maxEntries: 256 });

/** Keeps the batch's latest first-in-turn requests (`SessionState.previous`) for the next batches' reads. */
export function rememberLatest(state: PrefixState): void {
  for (const [key, session] of state.sessions) {
    const [tenantId, sessionId] = JSON.parse(key) as [string, string];
    for (const [runtime, latest] of session.previous) measuredFirsts.set(runtimeKey(tenantId, sessionId, runtime), latest);
  }
}

export function emptySession(): SessionState {
  return { turns: 0, turnOf: new Map(), seen: new Set(), previous: new Map(), before: new Map(), loaded: new Map(), planned: [] };
}

/**
 * The state the calls of a batch are recorded against, in one query for all their sessions: the
 * turn count of each session, the rows of the batch's turns (turn number, runtimes seen), the
 * latest first-in-turn request of each (session, runtime), and which call ids already have a row.
 * It reads only what the batch needs, not whole sessions' rows.
 */
export async function loadPrefixState(trx: Transaction<Database>, calls: readonly CallKey[]): Promise<PrefixState> {
  const state: PrefixState = { sessions: new Map(), existing: new Set() };
  if (calls.length === 0) return state;
  for (const c of calls) state.sessions.set(sessionKey(c.tenantId, c.sessionId), emptySession());
  // the latest first-in-turn requests this process holds of the batch's runtimes
  const known = new Map<string, LatestFirst & KnownFirst>();
  for (const c of calls) {
    const key = runtimeKey(c.tenantId, c.sessionId, c.runtime);
    const latest = known.has(key) ? undefined : measuredFirsts.get(key);
    if (latest) known.set(key, { ...latest, tenantId: c.tenantId, sessionId: c.sessionId, runtime: c.runtime });
  }
  const { rows } = await prefixStateQuery(calls, [...known.values()]).execute(trx);
  const found = rows[0];
  const session = (tenantId: string, sessionId: string) => state.sessions.get(sessionKey(tenantId, sessionId))!;
  for (const r of found.sessions) session(r.tenant_id, r.session_id).turns = r.turns;
  for (const r of found.seen) {
    const s = session(r.tenant_id, r.session_id);
    if (!s.turnOf.has(r.turn_id)) s.turnOf.set(r.turn_id, r.turn);
    s.seen.add(seenKey(r.turn_id, r.runtime));
  }
  for (const r of found.previous) {
    const position = Number(r.position);
    const held = known.get(runtimeKey(r.tenant_id, r.session_id, r.runtime));
    let latest: LatestFirst;
    if (r.body !== null) {
      const request = measureRequest({
        protocol: r.protocol,
        body: JSON.parse(r.body) as Record<string, unknown>,
        layout: r.layout as RecordedRequest['layout'],
      });
      latest = { callId: r.call_id, position, bodyMd5: bodyFingerprint(r.body), request };
    } else if (held?.callId === r.call_id && held.position === position) latest = held;
    else throw new Error(`prefix_reports: the read left out the body of call ${r.call_id}, which this process does not hold`);
    const { request } = latest;
    session(r.tenant_id, r.session_id).previous.set(r.runtime, { callId: latest.callId, position, bodyMd5: latest.bodyMd5, request });
    session(r.tenant_id, r.session_id).loaded.set(r.runtime, { turn: r.turn, position, request });
  }
  for (const r of found.before) {
    session(r.tenant_id, r.session_id).before.set(beforeKey(r.runtime, r.replaced), {
      turn: r.turn,
      position: Number(r.position),
      request: measureRequest({ protocol: r.protocol, body: JSON.parse(r.body) as Record<string, unknown>, layout: r.layout as RecordedRequest['layout'] }),
    });
  }
  for (const callId of found.existing) state.existing.add(callId);
  return state;
}
