import { type Kysely, type RawBuilder, sql } from 'kysely';
import { CompactionPrefixMismatchError, SupersededTurnNotLatestError } from '../errors';
import { type CommittedMessage, openingMessage } from '../event-types';
import type { Database } from '../schema';
import type { InlineProjection, PendingEvent, SqlWrite, SqlWriteContext } from './projection';
import { followingStory } from './story-fold';

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
 * It follows the story path (`followingStory`): after a revert, a selected alternative (a
 * regenerated turn's `turn.superseded@1` too: the regeneration's `turn.committed@1` right after it
 * then appends its rows), a cancel that kept a partial turn, or a branch, the session's rows are
 * folded again from the log (`storyEvents`): the turns on the path, in log order, ords dense.
 * An edit (`message.edited@1`) replaces a message's text.
 * A session's opening (`session.opened@1`, appended with `session.created@1`) is its first row:
 * turn 0's story message (`openingMessage`; its `execution_id` is its turn id, no execution
 * commits it), not counted among the committed turns (`history_watermarks.turns`), so the first
 * player turn is still turn 1 (`{{ session.turnNumber }}`, prefix reports, the inspector).
 */
export const turnMessagesProjection: InlineProjection = followingStory({
  name: 'turn_messages',
  handles: ['session.opened@1', 'history.compacted@1', 'turn.committed@1', 'message.edited@1', 'execution.cancelled@1'],
  tables: ['turn_messages', 'history_watermarks'],
  sqlFor: turnMessagesSql,
  // only the latest turn, uncompacted, is ever superseded (an isolated regeneration's source left its rows when it started)
  check: async (trx, event) => {
    if (event.type !== 'turn.superseded@1') return;
    await checkLatestTurn(trx, { sessionId: event.streamId, turnId: event.data.turnId, gone: event.data.cause === 'retry' ? 'allowed' : 'refused' });
  },
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
    if (event.type === 'message.edited@1') {
      await trx
        .updateTable('turn_messages')
        .set({ text: event.data.text })
        .where('session_id', '=', event.streamId)
        .where('message_id', '=', event.data.messageId)
        .execute();
      return;
    }
    if (event.type === 'execution.cancelled@1') {
      // a cancel that kept the partial turn: committed as a turn is
      const messages = event.data.messages ?? [];
      if (messages.length === 0) return;
      await appendTurn(trx, {
        tenantId: event.tenantId,
        sessionId: event.streamId,
        turnId: event.data.turnId,
        executionId: event.data.executionId,
        committedAt: new Date(event.recordedAt),
        messages,
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

/** A turn to append (`appendTurn`), its commit time aside. */
interface Turn {
  tenantId: string;
  sessionId: string;
  turnId: string;
  executionId: string;
  messages: readonly CommittedMessage[];
}

/**
 * A turn's messages after the session's last row, counted as one more turn (once: rows already
 * there add none) unless `counted: false` (the opening, turn 0).
 */
async function appendTurn(trx: Kysely<Database>, turn: Turn & { committedAt: Date }, options: { counted: boolean } = { counted: true }): Promise<void> {
  if (turn.messages.length === 0) return;
  // one statement: the rows after the session's last ord and, when any was new and the turn counts,
  // one more turn on its watermark row (a commit whose rows are there already adds none)
  const [base, inserted, watermark] = appendTurnCtes(turn, { ...options, at: { time: sql`${turn.committedAt}::timestamptz` }, ref: (local) => sql.id(local) });
  await sql`with base as (${base.body}), inserted as (${inserted.body}) ${watermark.body}`.execute(trx);
}

/**
 * `appendTurn`'s statement as three CTE bodies (`base`, `inserted`, `watermark`; `ref` names them):
 * the commit time is `at.time`, read from `at.from` when given (an append's inserted row, which then
 * also guards the insert: no row, no write).
 */
function appendTurnCtes(
  turn: Turn,
  options: { counted: boolean; at: { time: RawBuilder<unknown>; from?: RawBuilder<unknown> }; ref: (local: string) => RawBuilder<unknown> },
): [{ name: 'base'; body: RawBuilder<unknown> }, { name: 'inserted'; body: RawBuilder<unknown> }, { name: 'watermark'; body: RawBuilder<unknown> }] {
  const rows = sql.join(
    turn.messages.map(
      (m, i) =>
        sql`(${i + 1}::int, ${m.messageId}::text, ${m.role}::text, ${m.sourceType}::text, ${m.pluginId}::text, ${m.runtimeId}::text, ${m.outputKind}::text, ${m.text}::text, ${m.media ? JSON.stringify(m.media) : null}::jsonb)`,
    ),
  );
  const { ref, at } = options;
  return [
    { name: 'base', body: sql`select coalesce(max(ord), 0) as ord from turn_messages where session_id = ${turn.sessionId}::text` },
    {
      name: 'inserted',
      body: sql`insert into turn_messages (message_id, tenant_id, session_id, turn_id, execution_id, ord, role, source_type, plugin_id, runtime_id, output_kind, text, media, compacted, committed_at)
      select v.message_id, ${turn.tenantId}::text, ${turn.sessionId}::text, ${turn.turnId}::text, ${turn.executionId}::text, base.ord + v.n,
        v.role, v.source_type, v.plugin_id, v.runtime_id, v.output_kind, v.text, v.media, false, ${at.time}
      from ${ref('base')} base${at.from === undefined ? sql`` : sql`, ${at.from} e`}, (values ${rows}) as v(n, message_id, role, source_type, plugin_id, runtime_id, output_kind, text, media)
      order by v.n
      on conflict (session_id, message_id) do nothing
      returning message_id`,
    },
    {
      name: 'watermark',
      body: sql`insert into history_watermarks (session_id, tenant_id, compacted_through, turns)
    select ${turn.sessionId}::text, ${turn.tenantId}::text, 0, 1
    where ${options.counted}::boolean and exists (select 1 from ${ref('inserted')})
    on conflict (session_id) do update set turns = history_watermarks.turns + 1`,
    },
  ];
}

/**
 * `event`'s write in the append's statement (`Projection.sqlFor`): a commit's (or the opening's)
 * `appendTurn`, its time the event's inserted row's. It reads the session's last ord in the
 * statement's snapshot, which holds every earlier append of the stream when the append writes
 * (`insertAtVersion`); it writes the session's rows, so two in one append take the transaction path.
 * A compaction (its prefix check), an edit and the path's events have none.
 */
function turnMessagesSql(event: PendingEvent, ctx: SqlWriteContext): SqlWrite | null | undefined {
  let turn: Turn & { counted: boolean };
  if (event.type === 'turn.committed@1') {
    const { turnId, executionId, messages } = event.data;
    turn = { tenantId: event.tenantId, sessionId: event.streamId, turnId, executionId, messages, counted: true };
  } else if (event.type === 'session.opened@1') {
    const { turnId } = event.data;
    turn = { tenantId: event.tenantId, sessionId: event.streamId, turnId, executionId: turnId, messages: [openingMessage(event.data)], counted: false };
  } else return undefined;
  if (turn.messages.length === 0) return null;
  return {
    ctes: appendTurnCtes(turn, { counted: turn.counted, at: { time: sql`e.recorded_at`, from: ctx.row }, ref: (local) => ctx.ref(local) }),
    rows: [`turn_messages:${event.streamId}`, `history_watermarks:${event.streamId}`],
  };
}

/** The turn's rows are the session's last ords and uncompacted; anything else is refused (`SupersededTurnNotLatestError`). */
async function checkLatestTurn(trx: Kysely<Database>, at: { sessionId: string; turnId: string; gone: 'allowed' | 'refused' }): Promise<void> {
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
  if (rows.length === 0 && at.gone === 'allowed') return;
  const ords = rows.map((r) => Number(r.ord));
  const last = Number(max ?? 0);
  const isTail = rows.length > 0 && Math.max(...ords) === last && Math.min(...ords) === last - rows.length + 1;
  if (!isTail || rows.some((r) => r.compacted)) throw new SupersededTurnNotLatestError(at.sessionId, at.turnId);
}
