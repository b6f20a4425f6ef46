import { type RawBuilder, sql } from 'kysely';

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

/** A latest first-in-turn request the process holds: the read sends its call, position and body MD5 instead of reading its body back. */
export interface KnownFirst {
  tenantId: string;
  sessionId: string;
  runtime: string;
  callId: string;
  position: number;
  bodyMd5: string;
}

/** What `prefixStateQuery` returns: one row of JSON arrays, one per part. */
export interface StateRow {
  sessions: { tenant_id: string; session_id: string; turns: number }[];
  seen: { tenant_id: string; session_id: string; turn_id: string; runtime: string; turn: number }[];
  /** `body` null: the row is the one `known` named (its call and position), measured already. */
  previous: {
    tenant_id: string;
    session_id: string;
    runtime: string;
    turn: number;
    call_id: string;
    position: string;
    protocol: string;
    body: string | null;
    layout: unknown;
  }[];
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
 * The statement `loadPrefixState` sends (exported for the EXPLAIN test): for the calls of a batch,
 * each session's turn count, the rows of the batch's turns, the latest first-in-turn row of each
 * (session, runtime) (its body null when it is one of `known`), the rows a regenerated turn is
 * compared with, and the call ids that have a row.
 *
 * Each part reads prefix_reports per row of the batch by an index on the session, in a lateral
 * subquery the planner keeps (an aggregate, a limit or `offset 0`). As a semi-join with the batch,
 * the table was read whole, every tenant's sessions, by the turn count and the batch's turns
 * without statistics (autovacuum off, a new database), the batch's turns even with them, and by
 * a regenerated turn's part whenever the batch held one; the call ids with a row are looked up by
 * the primary key one by one, the table read whole otherwise when it had no statistics (issue 33: 649 buffer hits for an
 * Emberback batch of 9 calls on a 484-row table, now 178).
 */
export function prefixStateQuery(calls: readonly CallKey[], known: readonly KnownFirst[]): RawBuilder<StateRow> {
  // a regenerated turn's call also names the turn it replaces (its number is what it takes)
  const keys = [...calls, ...calls.flatMap((c) => (c.retryFromTurnId === undefined ? [] : [{ ...c, turnId: c.retryFromTurnId }]))];
  const column = (pick: (c: CallKey) => string) => keys.map(pick);
  const retries = calls.filter((c) => c.retryFromTurnId !== undefined);
  const retryColumn = (pick: (c: CallKey) => string) => retries.map(pick);
  const knownColumn = <T>(pick: (k: KnownFirst) => T) => known.map(pick);
  return sql<StateRow>`
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
    ),
    known as (
      select * from unnest(
        ${knownColumn((k) => k.tenantId)}::text[], ${knownColumn((k) => k.sessionId)}::text[], ${knownColumn((k) => k.runtime)}::text[],
        ${knownColumn((k) => k.callId)}::text[], ${knownColumn((k) => String(k.position))}::bigint[], ${knownColumn((k) => k.bodyMd5)}::text[]
      ) as k(tenant_id, session_id, runtime, call_id, position, body_md5)
    )
    select
      (select coalesce(json_agg(t), '[]') from (
        select b.tenant_id, b.session_id, m.turns
        from (select distinct tenant_id, session_id from batch) b
        cross join lateral (
          select max(p.turn)::int as turns from prefix_reports p where p.session_id = b.session_id and p.tenant_id = b.tenant_id
        ) m
        where m.turns is not null
      ) t) as sessions,
      (select coalesce(json_agg(t), '[]') from (
        select distinct b.tenant_id, b.session_id, b.turn_id, p.runtime, p.turn
        from (select distinct tenant_id, session_id, turn_id from batch) b
        cross join lateral (
          select p.runtime, p.turn from prefix_reports p
          where p.session_id = b.session_id and p.tenant_id = b.tenant_id and p.turn_id = b.turn_id
          offset 0
        ) p
      ) t) as seen,
      (select coalesce(json_agg(t), '[]') from (
        select b.tenant_id, b.session_id, b.runtime, p.turn, p.call_id, p.position::text as position, p.protocol, p.layout,
          case when (b.tenant_id, b.session_id, b.runtime, p.call_id, p.position, md5(p.body)) in (select * from known) then null else p.body end as body
        from (select distinct tenant_id, session_id, runtime from batch) b
        cross join lateral (
          select p.turn, p.call_id, p.position, p.protocol, p.layout, p.body from prefix_reports p
          where p.first_in_turn and p.session_id = b.session_id and p.runtime = b.runtime and p.tenant_id = b.tenant_id
          order by p.position desc limit 1
        ) p
      ) t) as previous,
      (select coalesce(json_agg(t), '[]') from (
        select r.tenant_id, r.session_id, r.runtime, r.replaced, p.turn, p.position::text as position, p.protocol, p.body, p.layout
        from retries r
        cross join lateral (
          select p.turn, p.position, p.protocol, p.body, p.layout from prefix_reports p
          where p.first_in_turn and p.session_id = r.session_id and p.runtime = r.runtime and p.tenant_id = r.tenant_id
            and p.turn < (select min(x.turn) from prefix_reports x where x.session_id = r.session_id and x.tenant_id = r.tenant_id and x.turn_id = r.replaced)
          order by p.position desc limit 1
        ) p
      ) t) as before,
      -- any tenant's: the primary key the insert conflicts on is call_id alone
      (select coalesce(json_agg(p.call_id), '[]') from (select distinct unnest(${column((c) => c.callId)}::text[]) as call_id) c
        cross join lateral (select p.call_id from prefix_reports p where p.call_id = c.call_id offset 0) p) as existing`;
}
