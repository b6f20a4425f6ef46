import { sql, type Transaction } from 'kysely';
import type { Database } from '../events';
import { type MeasuredRequest, measureRequest, type RecordedRequest } from './prefix-compare';

/** A model call a batch is about to record: which session, turn and runtime it belongs to. */
export interface CallKey {
  tenantId: string;
  sessionId: string;
  turnId: string;
  runtime: string;
  callId: string;
  /** A regenerated turn's call: the turn it replaces (`llm.calling@1` `retryFromTurnId`). */
  retryFromTurnId?: string;
}

/** A first-in-turn request of a runtime, with its turn number (what a regenerated turn is compared with). */
export interface FirstRequest {
  turn: number;
  position: number;
  request: MeasuredRequest;
}

/** A session's `prefix_reports` as far as the calls of a batch need it; updated as the batch adds rows. */
export interface SessionState {
  /** The highest turn number of the session's rows (a regenerated turn takes the number of the turn it replaces). */
  turns: number;
  /** The turn number of each turn id the batch names that has a row. */
  turnOf: Map<string, number>;
  /** `turnId runtime` pairs (see `seenKey`) that have a row. */
  seen: Set<string>;
  /** Per runtime, the first-in-turn row with the highest position: what the next turn is compared with. */
  previous: Map<string, { position: number; request: MeasuredRequest }>;
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

export function emptySession(): SessionState {
  return { turns: 0, turnOf: new Map(), seen: new Set(), previous: new Map(), before: new Map(), loaded: new Map(), planned: [] };
}

interface StateRow {
  sessions: { tenant_id: string; session_id: string; turns: number }[];
  seen: { tenant_id: string; session_id: string; turn_id: string; runtime: string; turn: number }[];
  previous: { tenant_id: string; session_id: string; runtime: string; turn: number; position: string; protocol: string; body: string; layout: unknown }[];
  existing: string[];
  before: {
    tenant_id: string;
    session_id: string;
    runtime: string;
    replaced: string;
    turn: number;
    position: string;
    protocol: string;
    body: string;
    layout: unknown;
  }[];
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
  // a regenerated turn's call also names the turn it replaces (its number is what it takes)
  const keys = [...calls, ...calls.flatMap((c) => (c.retryFromTurnId === undefined ? [] : [{ ...c, turnId: c.retryFromTurnId }]))];
  const column = (pick: (c: CallKey) => string) => keys.map(pick);
  const retries = calls.filter((c) => c.retryFromTurnId !== undefined);
  const retryColumn = (pick: (c: CallKey) => string) => retries.map(pick);
  const { rows } = await sql<StateRow>`
    with batch as (
      select distinct * from unnest(
        ${column((c) => c.tenantId)}::text[], ${column((c) => c.sessionId)}::text[],
        ${column((c) => c.turnId)}::text[], ${column((c) => c.runtime)}::text[]
      ) as b(tenant_id, session_id, turn_id, runtime)
    ),
    retries as (
      select distinct * from unnest(
        ${retryColumn((c) => c.tenantId)}::text[], ${retryColumn((c) => c.sessionId)}::text[],
        ${retryColumn((c) => c.runtime)}::text[], ${retryColumn((c) => c.retryFromTurnId!)}::text[]
      ) as r(tenant_id, session_id, runtime, replaced)
    )
    select
      (select coalesce(json_agg(t), '[]') from (
        select p.tenant_id, p.session_id, max(p.turn)::int as turns
        from prefix_reports p
        where (p.tenant_id, p.session_id) in (select tenant_id, session_id from batch)
        group by p.tenant_id, p.session_id
      ) t) as sessions,
      (select coalesce(json_agg(t), '[]') from (
        select distinct p.tenant_id, p.session_id, p.turn_id, p.runtime, p.turn
        from prefix_reports p
        where (p.tenant_id, p.session_id, p.turn_id) in (select tenant_id, session_id, turn_id from batch)
      ) t) as seen,
      (select coalesce(json_agg(t), '[]') from (
        select distinct on (p.tenant_id, p.session_id, p.runtime)
          p.tenant_id, p.session_id, p.runtime, p.turn, p.position::text as position, p.protocol, p.body, p.layout
        from prefix_reports p
        where p.first_in_turn and (p.tenant_id, p.session_id, p.runtime) in (select tenant_id, session_id, runtime from batch)
        order by p.tenant_id, p.session_id, p.runtime, p.position desc
      ) t) as previous,
      (select coalesce(json_agg(t), '[]') from (
        select distinct on (r.tenant_id, r.session_id, r.runtime, r.replaced)
          r.tenant_id, r.session_id, r.runtime, r.replaced, p.turn, p.position::text as position, p.protocol, p.body, p.layout
        from retries r
        join prefix_reports p on p.tenant_id = r.tenant_id and p.session_id = r.session_id and p.runtime = r.runtime and p.first_in_turn
        where p.turn < (select min(x.turn) from prefix_reports x where x.tenant_id = r.tenant_id and x.session_id = r.session_id and x.turn_id = r.replaced)
        order by r.tenant_id, r.session_id, r.runtime, r.replaced, p.position desc
      ) t) as before,
      -- any tenant's: the primary key the insert conflicts on is call_id alone
      (select coalesce(json_agg(p.call_id), '[]') from prefix_reports p
        where p.call_id in (select unnest(${column((c) => c.callId)}::text[]))) as existing`.execute(trx);
  const found = rows[0];
  const session = (tenantId: string, sessionId: string) => state.sessions.get(sessionKey(tenantId, sessionId))!;
  for (const r of found.sessions) session(r.tenant_id, r.session_id).turns = r.turns;
  for (const r of found.seen) {
    const s = session(r.tenant_id, r.session_id);
    if (!s.turnOf.has(r.turn_id)) s.turnOf.set(r.turn_id, r.turn);
    s.seen.add(seenKey(r.turn_id, r.runtime));
  }
  for (const r of found.previous) {
    const first = {
      turn: r.turn,
      position: Number(r.position),
      request: measureRequest({ protocol: r.protocol, body: JSON.parse(r.body) as Record<string, unknown>, layout: r.layout as RecordedRequest['layout'] }),
    };
    session(r.tenant_id, r.session_id).previous.set(r.runtime, { position: first.position, request: first.request });
    session(r.tenant_id, r.session_id).loaded.set(r.runtime, first);
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
