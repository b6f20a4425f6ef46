import { type Kysely, sql } from 'kysely';
import { SessionBranchedV1 } from './event-types';
import type { Database } from './schema';

/** Where a branch comes from, as the session views show it. */
export interface BranchOriginView {
  /** The parent session. */
  sessionId: string;
  /** The last turn of the parent's history the branch kept. */
  atTurnId: string;
}

/** A branch of a session, as the session's view lists it. */
export interface SessionBranchView {
  sessionId: string;
  atTurnId: string;
  /** When the branch was made (ISO 8601). */
  createdAt: string;
}

/**
 * The origin of each of the given sessions that is a branch (its first event is
 * `session.branched@1`): one read of the streams' version-1 rows, whatever their length.
 */
export async function readBranchOrigins(db: Kysely<Database>, tenantId: string, sessionIds: readonly string[]): Promise<Map<string, BranchOriginView>> {
  if (sessionIds.length === 0) return new Map();
  const rows = await db
    .selectFrom('events')
    .select(['stream_id', 'data'])
    .where('stream_id', 'in', [...sessionIds])
    .where('stream_version', '=', 1)
    .where('tenant_id', '=', tenantId)
    .where('type', '=', 'session.branched@1')
    .execute();
  return new Map(
    rows.map((r) => {
      const data = SessionBranchedV1.parse(r.data);
      return [r.stream_id, { sessionId: data.parentSessionId, atTurnId: data.atTurnId }];
    }),
  );
}

/**
 * The tenant's branches of a session, newest first, at most `limit`: a range read of the partial
 * index `events_session_branches` (migration 0019), whatever the size of the log.
 */
export async function readSessionBranches(db: Kysely<Database>, at: { tenantId: string; sessionId: string; limit: number }): Promise<SessionBranchView[]> {
  const rows = await db
    .selectFrom('events')
    .select(['stream_id', sql<string>`data->>'atTurnId'`.as('at_turn_id'), 'recorded_at'])
    .where('type', '=', 'session.branched@1')
    .where(sql<string>`data->>'parentSessionId'`, '=', at.sessionId)
    .where('tenant_id', '=', at.tenantId)
    .orderBy('global_position', 'desc')
    .limit(at.limit)
    .execute();
  return rows.map((r) => ({ sessionId: r.stream_id, atTurnId: r.at_turn_id, createdAt: new Date(r.recorded_at).toISOString() }));
}

/** Whether `turnId` is a turn of the session's history (`turn_messages`: a committed turn still in it, or the opening). */
export async function readHistoryHasTurn(db: Kysely<Database>, at: { tenantId: string; sessionId: string; turnId: string }): Promise<boolean> {
  const row = await db
    .selectFrom('turn_messages')
    .select('turn_id')
    .where('session_id', '=', at.sessionId)
    .where('turn_id', '=', at.turnId)
    .where('tenant_id', '=', at.tenantId)
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}
