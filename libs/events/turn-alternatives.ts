import { type Kysely, sql } from 'kysely';
import { type CommittedMessage, type EventData, PlayerInputSubmittedV1, SessionBranchedV1, TurnCommittedV1 } from './event-types';
import type { Database } from './schema';

/** One alternative of a turn: the original turn, or one of its regenerations (`retryFromTurnId`). */
export interface TurnAlternativeRecord {
  /** The alternative's id: its execution id. */
  executionId: string;
  turnId: string;
  /** When its input was recorded (ISO 8601). */
  createdAt: string;
  /** The player's input as typed (an alternative keeps its source's). */
  text: string;
  formValues?: NonNullable<EventData<'player-input.submitted@1'>['formValues']>;
  /** The messages its `turn.committed@1` recorded; absent while it runs or when it failed. */
  messages?: CommittedMessage[];
  /** In the history now (`turn_messages` holds its rows). */
  selected: boolean;
}

/** The alternatives of one turn, oldest first; `alternativeOf` is the first one's turn id (the group's id). */
export interface TurnAlternativesRecord {
  alternativeOf: string;
  alternatives: TurnAlternativeRecord[];
}

interface EventRow {
  type: string;
  data: unknown;
  recorded_at: Date | string;
}

/**
 * The alternatives of the player turn `turnId` of a session (any of them names the group), read
 * from the session's log: their inputs (`player-input.submitted@1`, the group's first and every
 * one whose `alternativeOf` is it) and their commits; which one is selected from `turn_messages`.
 * Null when the session has no player input with that turn id (or is another tenant's).
 */
export async function readTurnAlternatives(
  db: Kysely<Database>,
  at: { tenantId: string; sessionId: string; turnId: string },
): Promise<TurnAlternativesRecord | null> {
  const { tenantId, sessionId, turnId } = at;
  // a branch's turns up to its branch point are its parent's log (up to the branch): read through it
  const logs = await storyStreams(db, { tenantId, sessionId });
  const inLogs = sql.join(
    logs.map((l) =>
      l.throughVersion === undefined ? sql`(stream_id = ${l.streamId})` : sql`(stream_id = ${l.streamId} and stream_version <= ${l.throughVersion})`,
    ),
    sql` or `,
  );
  const { rows: named } = await sql<EventRow>`
    select type, data, recorded_at from events
    where (${inLogs}) and tenant_id = ${tenantId} and type = 'player-input.submitted@1' and data->>'turnId' = ${turnId}
    limit 1`.execute(db);
  if (named.length === 0) return null;
  const first = PlayerInputSubmittedV1.parse(named[0].data);
  const root = first.alternativeOf ?? first.retryFromTurnId ?? first.turnId;
  const { rows: inputs } = await sql<EventRow>`
    select type, data, recorded_at from events
    where (${inLogs}) and tenant_id = ${tenantId} and type = 'player-input.submitted@1'
      and (data->>'turnId' = ${root} or data->>'alternativeOf' = ${root})
    order by global_position`.execute(db);
  const alternatives = inputs.map((r): TurnAlternativeRecord => {
    const d = PlayerInputSubmittedV1.parse(r.data);
    return {
      executionId: d.executionId,
      turnId: d.turnId,
      createdAt: new Date(r.recorded_at).toISOString(),
      text: d.text,
      ...(d.formValues ? { formValues: d.formValues } : {}),
      selected: false,
    };
  });
  const executionIds = alternatives.map((a) => a.executionId);
  const { rows: commits } = await sql<EventRow>`
    select type, data, recorded_at from events
    where (${inLogs}) and tenant_id = ${tenantId} and type = 'turn.committed@1'
      and data->>'executionId' in (${sql.join(executionIds)})`.execute(db);
  const committed = new Map(commits.map((r) => TurnCommittedV1.parse(r.data)).map((c) => [c.executionId, c.messages]));
  const turnIds = alternatives.map((a) => a.turnId);
  const shown = await db
    .selectFrom('turn_messages')
    .select('turn_id')
    .distinct()
    .where('session_id', '=', sessionId)
    .where('tenant_id', '=', tenantId)
    .where('turn_id', 'in', turnIds)
    .execute();
  const selected = new Set(shown.map((r) => r.turn_id));
  for (const a of alternatives) {
    const messages = committed.get(a.executionId);
    if (messages) a.messages = messages;
    a.selected = selected.has(a.turnId);
  }
  return { alternativeOf: root, alternatives };
}

/** The session's latest turn in the history: the turn of its last `turn_messages` row, and whether that row is compacted. */
export async function readLatestTurn(
  db: Kysely<Database>,
  at: { tenantId: string; sessionId: string },
): Promise<{ turnId: string; executionId: string; compacted: boolean } | null> {
  const row = await db
    .selectFrom('turn_messages')
    .select(['turn_id', 'execution_id', 'compacted'])
    .where('session_id', '=', at.sessionId)
    .where('tenant_id', '=', at.tenantId)
    .orderBy('ord', 'desc')
    .limit(1)
    .executeTakeFirst();
  return row ? { turnId: row.turn_id, executionId: row.execution_id, compacted: row.compacted } : null;
}

/**
 * The logs a session's story reads, its own first: for a branch, its parent's up to the branch
 * (`session.branched@1` `parentVersion`), and so on up to the root.
 */
async function storyStreams(db: Kysely<Database>, at: { tenantId: string; sessionId: string }): Promise<{ streamId: string; throughVersion?: number }[]> {
  const streams: { streamId: string; throughVersion?: number }[] = [{ streamId: at.sessionId }];
  for (let id = at.sessionId; ;) {
    const first = await db
      .selectFrom('events')
      .select('data')
      .where('stream_id', '=', id)
      .where('stream_version', '=', 1)
      .where('tenant_id', '=', at.tenantId)
      .where('type', '=', 'session.branched@1')
      .executeTakeFirst();
    if (!first) return streams;
    const branched = SessionBranchedV1.parse(first.data);
    streams.push({ streamId: branched.parentSessionId, throughVersion: branched.parentVersion });
    id = branched.parentSessionId;
  }
}
