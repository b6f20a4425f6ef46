import { type Kysely, sql } from 'kysely';
import { MessageEditedV1, TurnRevertedV1 } from './event-types';
import type { Database } from './schema';

/**
 * The reads behind undo and edit (issue 30), each bounded to one session: what earlier reverts
 * named, a message of the history with its text as edited, the turns and executions a revert
 * takes out. "In the history" is a `turn_messages` row whose turn no `turn.reverted@1` names (the
 * read side also drops reverted turns from `turn_messages`; reading the log as well keeps these
 * answers right whichever of the two a deployment runs).
 */

interface At {
  tenantId: string;
  sessionId: string;
}

/** What the session's `turn.reverted@1` events named: their turns and executions. */
export interface RevertedRecord {
  turnIds: ReadonlySet<string>;
  executionIds: ReadonlySet<string>;
}

/** A message of the history, its text as the history has it now (the last `message.edited@1` of it, else as committed). */
export interface HistoryMessageRecord {
  messageId: string;
  turnId: string;
  executionId: string;
  sourceType: string;
  outputKind: string | null;
  compacted: boolean;
  text: string;
}

/** What reverting a turn takes out of the history (see `readRevertScope`). */
export interface RevertScope {
  /** The turn named is the session's opening (turn 0): nothing to revert. */
  opening: boolean;
  /** The named turn and every later turn of the history, oldest first. */
  turnIds: string[];
  /** Every execution of those turns (each alternative, failed ones too), in submission order. */
  executionIds: string[];
}

export async function readReverted(db: Kysely<Database>, at: At): Promise<RevertedRecord> {
  const { rows } = await sql<{ data: unknown }>`
    select data from events
    where stream_id = ${at.sessionId} and tenant_id = ${at.tenantId} and type = 'turn.reverted@1'
    order by stream_version`.execute(db);
  const turnIds = new Set<string>();
  const executionIds = new Set<string>();
  for (const r of rows) {
    const d = TurnRevertedV1.parse(r.data);
    for (const t of d.turnIds) turnIds.add(t);
    for (const e of d.executionIds) executionIds.add(e);
  }
  return { turnIds, executionIds };
}

/** The last text `message.edited@1` gave each of these messages (absent: never edited). */
async function editedTexts(db: Kysely<Database>, at: At, messageIds: readonly string[]): Promise<Map<string, string>> {
  if (messageIds.length === 0) return new Map();
  const { rows } = await sql<{ data: unknown }>`
    select data from events
    where stream_id = ${at.sessionId} and tenant_id = ${at.tenantId} and type = 'message.edited@1'
      and data->>'messageId' in (${sql.join(messageIds)})
    order by stream_version`.execute(db);
  const texts = new Map<string, string>();
  for (const r of rows) {
    const d = MessageEditedV1.parse(r.data);
    texts.set(d.messageId, d.text);
  }
  return texts;
}

/** A message of the session's history (null: none, another tenant's, or its turn reverted), its text as edited. */
export async function readHistoryMessage(db: Kysely<Database>, at: At & { messageId: string }): Promise<HistoryMessageRecord | null> {
  const row = await db
    .selectFrom('turn_messages')
    .select(['message_id', 'turn_id', 'execution_id', 'source_type', 'output_kind', 'compacted', 'text'])
    .where('session_id', '=', at.sessionId)
    .where('tenant_id', '=', at.tenantId)
    .where('message_id', '=', at.messageId)
    .executeTakeFirst();
  if (!row) return null;
  if ((await readReverted(db, at)).turnIds.has(row.turn_id)) return null;
  const edited = await editedTexts(db, at, [row.message_id]);
  return {
    messageId: row.message_id,
    turnId: row.turn_id,
    executionId: row.execution_id,
    sourceType: row.source_type,
    outputKind: row.output_kind,
    compacted: row.compacted,
    text: edited.get(row.message_id) ?? row.text,
  };
}

/**
 * The player's input of a turn as the history has it now: the last edit of its message, else the
 * text typed (`player-input.submitted@1`); null when the turn has no player input.
 */
export async function readPlayerInput(db: Kysely<Database>, at: At & { turnId: string }): Promise<{ messageId: string; text: string } | null> {
  // the history's row: as edited, and a branch's too for a turn it inherited from its parent
  const row = await db
    .selectFrom('turn_messages')
    .select(['message_id', 'text'])
    .where('session_id', '=', at.sessionId)
    .where('tenant_id', '=', at.tenantId)
    .where('turn_id', '=', at.turnId)
    .where('source_type', '=', 'player')
    .orderBy('ord')
    .limit(1)
    .executeTakeFirst();
  if (row) return { messageId: row.message_id, text: row.text };
  const { rows } = await sql<{ message_id: string; text: string }>`
    select data->>'messageId' as message_id, data->>'text' as text from events
    where stream_id = ${at.sessionId} and tenant_id = ${at.tenantId} and type = 'player-input.submitted@1' and data->>'turnId' = ${at.turnId}
    limit 1`.execute(db);
  if (rows.length === 0) return null;
  const { message_id: messageId, text } = rows[0];
  return { messageId, text: (await editedTexts(db, at, [messageId])).get(messageId) ?? text };
}

/**
 * What reverting `turnId` takes out, or null when the turn is not in the history (unknown, not
 * selected, already reverted, another tenant's): the turns of the history from it on (in
 * `turn_messages` order) and the executions recorded from the first input of its alternatives'
 * group on (every alternative of every one of those turns, failed runs and activations too), less
 * what an earlier revert took out. The opening (turn 0) is answered as such, with nothing to take.
 */
export async function readRevertScope(db: Kysely<Database>, at: At & { turnId: string }): Promise<RevertScope | null> {
  const reverted = await readReverted(db, at);
  if (reverted.turnIds.has(at.turnId)) return null;
  const named = await db
    .selectFrom('turn_messages')
    .select(sql<number>`min(ord)`.as('first'))
    .where('session_id', '=', at.sessionId)
    .where('tenant_id', '=', at.tenantId)
    .where('turn_id', '=', at.turnId)
    .executeTakeFirst();
  if (named?.first === null || named?.first === undefined) return null;
  // the opening's row (turn 0) names its turn as its execution (no execution commits it); a branch inherits its parent's
  const opened = await db
    .selectFrom('turn_messages')
    .select('turn_id')
    .where('session_id', '=', at.sessionId)
    .where('tenant_id', '=', at.tenantId)
    .where('turn_id', '=', at.turnId)
    .whereRef('execution_id', '=', 'turn_id')
    .limit(1)
    .execute();
  if (opened.length > 0) return { opening: true, turnIds: [], executionIds: [] };
  const turns = await db
    .selectFrom('turn_messages')
    .select(['turn_id', sql<number>`min(ord)`.as('first'), sql<string>`min(execution_id)`.as('execution_id')])
    .where('session_id', '=', at.sessionId)
    .where('tenant_id', '=', at.tenantId)
    .where('ord', '>=', Number(named.first))
    .groupBy('turn_id')
    .orderBy('first')
    .execute();
  const kept = turns.filter((t) => !reverted.turnIds.has(t.turn_id));
  // the group's first input: a regeneration names it (`alternativeOf`); an activation's turn is its own
  const { rows: inputs } = await sql<{ root: string | null }>`
    select coalesce(data->>'alternativeOf', data->>'retryFromTurnId') as root from events
    where stream_id = ${at.sessionId} and tenant_id = ${at.tenantId} and type = 'player-input.submitted@1' and data->>'turnId' = ${at.turnId}
    limit 1`.execute(db);
  const root = inputs[0]?.root ?? at.turnId;
  const first = await db
    .selectFrom('executions')
    .select('submitted_version')
    .where('session_id', '=', at.sessionId)
    .where('tenant_id', '=', at.tenantId)
    .where('turn_id', '=', root)
    .executeTakeFirst();
  // a branch reverting a turn it inherited: its group's first input is its parent's, so every execution of its own comes after it
  const executions =
    first === undefined
      ? await db
          .selectFrom('executions')
          .select('execution_id')
          .where('session_id', '=', at.sessionId)
          .where('tenant_id', '=', at.tenantId)
          .orderBy('submitted_version')
          .execute()
      : await db
          .selectFrom('executions')
          .select('execution_id')
          .where('session_id', '=', at.sessionId)
          .where('tenant_id', '=', at.tenantId)
          .where('submitted_version', '>=', first.submitted_version)
          .orderBy('submitted_version')
          .execute();
  const executionIds = [...new Set([...executions.map((e) => e.execution_id), ...kept.map((t) => t.execution_id)])].filter(
    (id) => !reverted.executionIds.has(id),
  );
  return { opening: false, turnIds: kept.map((t) => t.turn_id), executionIds };
}
