import { sql } from 'kysely';
import { eventByEvent, type InlineProjection } from './projection';

/** `turn_messages`: the committed conversation, one row per message, ordered per session, with its compacted marker. */
export const turnMessagesProjection: InlineProjection = eventByEvent({
  name: 'turn_messages',
  handles: ['history.compacted@1', 'turn.committed@1'],
  tables: ['turn_messages', 'history_watermarks'],
  async apply(trx, event) {
    if (event.type === 'history.compacted@1') {
      const ids = event.data.summaries.flatMap((s) => s.messageIds);
      if (ids.length === 0) return;
      await trx.updateTable('turn_messages').set({ compacted: true }).where('session_id', '=', event.streamId).where('message_id', 'in', ids).execute();
      const { through } = await trx
        .selectFrom('turn_messages')
        .select(sql<number | null>`max(ord)`.as('through'))
        .where('session_id', '=', event.streamId)
        .where('message_id', 'in', ids)
        .executeTakeFirstOrThrow();
      await trx
        .insertInto('history_watermarks')
        .values({ session_id: event.streamId, tenant_id: event.tenantId, compacted_through: Number(through ?? 0) })
        .onConflict((oc) =>
          oc.column('session_id').doUpdateSet({ compacted_through: sql`greatest(history_watermarks.compacted_through, excluded.compacted_through)` }),
        )
        .execute();
      return;
    }
    if (event.type !== 'turn.committed@1' || event.data.messages.length === 0) return;
    const { max } = await trx
      .selectFrom('turn_messages')
      .select(sql<number | null>`max(ord)`.as('max'))
      .where('session_id', '=', event.streamId)
      .executeTakeFirstOrThrow();
    const base = Number(max ?? 0);
    await trx
      .insertInto('turn_messages')
      .values(
        event.data.messages.map((m, i) => ({
          message_id: m.messageId,
          tenant_id: event.tenantId,
          session_id: event.streamId,
          turn_id: event.data.turnId,
          execution_id: event.data.executionId,
          ord: base + i + 1,
          role: m.role,
          source_type: m.sourceType,
          plugin_id: m.pluginId,
          runtime_id: m.runtimeId,
          output_kind: m.outputKind,
          text: m.text,
          media: m.media ? JSON.stringify(m.media) : null,
          compacted: false,
          committed_at: new Date(event.recordedAt),
        })),
      )
      .onConflict((oc) => oc.column('message_id').doNothing())
      .execute();
  },
});
