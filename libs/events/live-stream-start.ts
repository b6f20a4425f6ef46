import { type Kysely, sql } from 'kysely';
import type { Database } from './schema';

/** The events that end a committed turn of a session: a turn's commit, the opening (turn 0), a branch's origin. */
const TURN_ENDS = ['turn.committed@1', 'session.opened@1', 'session.branched@1'] as const;

/**
 * Where a live stream of a session (`GET /v1/sessions/:id/events` without `Last-Event-ID` or
 * `?from=`) starts: at the session's latest committed turn (its `turn.committed@1`; the opening,
 * turn 0, or a branch's origin when no turn has committed since), or at the input of its earliest
 * execution still pending (queued or running) when that is earlier, so a client that connects
 * while a turn is going gets that turn whole. Answers the global position of that event (the
 * stream sends it and what follows), or null when the session has none of these (the stream then
 * starts at its first event). Two indexed reads, scoped by tenant.
 */
export async function readLiveStreamStart(db: Kysely<Database>, tenantId: string, sessionId: string): Promise<number | null> {
  const { rows } = await sql<{ start: string | null }>`
    select least(
      (select global_position from events
        where stream_id = ${sessionId} and tenant_id = ${tenantId} and type in (${sql.join(TURN_ENDS.map((t) => sql.lit(t)))})
        order by stream_version desc limit 1),
      (select e.global_position from executions x
        join events e on e.stream_id = x.session_id and e.stream_version = x.submitted_version
        where x.session_id = ${sessionId} and x.tenant_id = ${tenantId} and x.status in ('queued', 'running')
        order by x.submitted_version limit 1)
    ) as start`.execute(db);
  const start = rows[0]?.start;
  return start === null || start === undefined ? null : Number(start);
}
