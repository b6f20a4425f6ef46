import { type Kysely, sql } from 'kysely';
import { CompactionPrefixMismatchError, SupersededTurnNotLatestError } from '../errors';
import { type CommittedMessage, openingMessage } from '../event-types';
import type { Database } from '../schema';
import { eventByEvent, type InlineProjection } from './projection';

/**
 * The oldest `limit` uncompacted messages of a session, oldest first: the rows after its
 * compaction watermark (compaction marks only a continuous prefix, so every row up to the
 * watermark is compacted and none after it), an index range read of (session_id, ord).
 */
export async function readUncompactedPrefix(
  db: Kysely<Database>,
  at: { sessionId: string; limit: number; tenantId?: string },
): Promise<{ messageId: string; order: number }[]> {
  let query = db
    .selectFrom('turn_messages')
    .select(['message_id', 'ord'])
    .where('session_id', '=', at.sessionId)
    .where('ord', '>', sql<number>`coalesce((select compacted_through from history_watermarks where session_id = ${at.sessionId}), 0)`);
  if (at.tenantId !== undefined) query = query.where('tenant_id', '=', at.tenantId);
  const rows = await query.orderBy('ord').limit(at.limit).execute();
  return rows.map((r) => ({ messageId: r.message_id, order: r.ord }));
}

/**
 * `turn_messages`: the committed conversation, one row per message, ordered per session, with its
 * compacted marker and the session's watermark row (the last compacted ord, and the number of
 * committed turns). A compaction marks
 * exactly the messages it names, which must be the stored uncompacted prefix in order, compared in
 * this transaction with a bounded read of it; anything else is refused
 * (`CompactionPrefixMismatchError`: the append rolls back, nothing changes).
 * A superseded turn (`turn.superseded@1`, only ever the latest) leaves: its rows, which must be the
 * session's last and uncompacted (else `SupersededTurnNotLatestError`), are deleted and the turn
 * uncounted; the messages that take their place (a selected alternative's, carried in the event, or
 * the regenerated turn's `turn.committed@1` right after it) get the freed ords: ords stay dense.
 * A session's opening (`session.opened@1`, appended with `session.created@1`) is its first row:
 * turn 0's story message (`openingMessage`; its `execution_id` is its turn id, no execution
 * commits it), not counted among the committed turns (`history_watermarks.turns`), so the first
 * player turn is still turn 1 (`{{ session.turnNumber }}`, prefix reports, the inspector).
 */
export const turnMessagesProjection: InlineProjection = eventByEvent({
  name: 'turn_messages',
  handles: ['session.opened@1', 'history.compacted@1', 'turn.committed@1', 'turn.superseded@1', 'execution.cancelled@1'],
  tables: ['turn_messages', 'history_watermarks'],
  async apply(trx, event) {
    if (event.type === 'session.opened@1') {
      await appendTurn(
        trx,
        {
          tenantId: event.tenantId,
          sessionId: event.streamId,
          turnId: event.data.turnId,
          executionId: event.data.turnId,
          committedAt: new Date(event.recordedAt),
          messages: [openingMessage(event.data)],
        },
        { counted: false },
      );
      return;
    }
    if (event.type === 'history.compacted@1') {
      const named = event.data.summaries.flatMap((s) => s.messageIds);
      if (named.length === 0) return;
      const prefix = await readUncompactedPrefix(trx, { sessionId: event.streamId, limit: named.length });
      if (prefix.length !== named.length || prefix.some((m, i) => m.messageId !== named[i])) {
        throw new CompactionPrefixMismatchError(
          event.streamId,
          named,
          prefix.map((m) => m.messageId),
        );
      }
      const [from, through] = [prefix[0].order, prefix[prefix.length - 1].order];
      await trx
        .updateTable('turn_messages')
        .set({ compacted: true })
        .where('session_id', '=', event.streamId)
        .where('ord', '>=', from)
        .where('ord', '<=', through)
        .execute();
      await trx
        .insertInto('history_watermarks')
        .values({ session_id: event.streamId, tenant_id: event.tenantId, compacted_through: through })
        .onConflict((oc) => oc.column('session_id').doUpdateSet({ compacted_through: through }))
        .execute();
      return;
    }
    if (event.type === 'turn.superseded@1') {
      await removeLatestTurn(trx, { sessionId: event.streamId, turnId: event.data.turnId });
      const messages = event.data.messages ?? [];
      if (messages.length === 0) return;
      await appendTurn(trx, {
        tenantId: event.tenantId,
        sessionId: event.streamId,
        turnId: event.data.byTurnId,
        executionId: event.data.byExecutionId,
        committedAt: new Date(event.recordedAt),
        messages,
      });
      return;
    }
    if (event.type === 'execution.cancelled@1') {
      // a stop that kept the partly streamed story text (`keepPartial`): a committed turn, as a commit's
      if (!event.data.messages?.length) return;
      await appendTurn(trx, {
        tenantId: event.tenantId,
        sessionId: event.streamId,
        turnId: event.data.turnId,
        executionId: event.data.executionId,
        committedAt: new Date(event.recordedAt),
        messages: event.data.messages,
      });
      return;
    }
    if (event.type !== 'turn.committed@1' || event.data.messages.length === 0) return;
    await appendTurn(trx, {
      tenantId: event.tenantId,
      sessionId: event.streamId,
      turnId: event.data.turnId,
      executionId: event.data.executionId,
      committedAt: new Date(event.recordedAt),
      messages: event.data.messages,
    });
  },
});

/**
 * A turn's messages after the session's last row, counted as one more turn (once: rows already
 * there add none) unless `counted: false` (the opening, turn 0).
 */
async function appendTurn(
  trx: Kysely<Database>,
  turn: { tenantId: string; sessionId: string; turnId: string; executionId: string; committedAt: Date; messages: readonly CommittedMessage[] },
  options: { counted: boolean } = { counted: true },
): Promise<void> {
  const { max } = await trx
    .selectFrom('turn_messages')
    .select(sql<number | null>`max(ord)`.as('max'))
    .where('session_id', '=', turn.sessionId)
    .executeTakeFirstOrThrow();
  const base = Number(max ?? 0);
  const inserted = await trx
    .insertInto('turn_messages')
    .values(
      turn.messages.map((m, i) => ({
        message_id: m.messageId,
        tenant_id: turn.tenantId,
        session_id: turn.sessionId,
        turn_id: turn.turnId,
        execution_id: turn.executionId,
        ord: base + i + 1,
        role: m.role,
        source_type: m.sourceType,
        plugin_id: m.pluginId,
        runtime_id: m.runtimeId,
        output_kind: m.outputKind,
        text: m.text,
        media: m.media ? JSON.stringify(m.media) : null,
        compacted: false,
        committed_at: turn.committedAt,
      })),
    )
    .onConflict((oc) => oc.column('message_id').doNothing())
    .returning('message_id')
    .execute();
  // one more turn, counted once (a commit whose rows are there already adds none)
  if (inserted.length === 0 || !options.counted) return;
  await trx
    .insertInto('history_watermarks')
    .values({ session_id: turn.sessionId, tenant_id: turn.tenantId, compacted_through: 0, turns: 1 })
    .onConflict((oc) => oc.column('session_id').doUpdateSet({ turns: sql<number>`history_watermarks.turns + 1` }))
    .execute();
}

/** Deletes the session's latest turn's rows (the last ords, uncompacted) and uncounts it; anything else is refused. */
async function removeLatestTurn(trx: Kysely<Database>, at: { sessionId: string; turnId: string }): Promise<void> {
  const { max } = await trx
    .selectFrom('turn_messages')
    .select(sql<number | null>`max(ord)`.as('max'))
    .where('session_id', '=', at.sessionId)
    .executeTakeFirstOrThrow();
  const rows = await trx
    .selectFrom('turn_messages')
    .select(['ord', 'compacted'])
    .where('session_id', '=', at.sessionId)
    .where('turn_id', '=', at.turnId)
    .execute();
  const ords = rows.map((r) => Number(r.ord));
  const last = Number(max ?? 0);
  const isTail = rows.length > 0 && Math.max(...ords) === last && Math.min(...ords) === last - rows.length + 1;
  if (!isTail || rows.some((r) => r.compacted)) throw new SupersededTurnNotLatestError(at.sessionId, at.turnId);
  await trx.deleteFrom('turn_messages').where('session_id', '=', at.sessionId).where('turn_id', '=', at.turnId).execute();
  await trx
    .updateTable('history_watermarks')
    .set({ turns: sql<number>`greatest(history_watermarks.turns - 1, 0)` })
    .where('session_id', '=', at.sessionId)
    .execute();
}
