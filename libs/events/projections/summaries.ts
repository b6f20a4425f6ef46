import { sql } from 'kysely';
import { InvalidEventError } from '../errors';
import { eventByEvent, type InlineProjection } from './projection';

/**
 * `summaries`, from `history.compacted@1` (turn_messages sets its own `compacted` marker). A merge
 * keeps the id, place and creation time of the oldest segment it replaces; kept segments do not change.
 */
export const summariesProjection: InlineProjection = eventByEvent({
  name: 'summaries',
  handles: ['history.compacted@1'],
  tables: ['summaries'],
  async apply(trx, event) {
    if (event.type !== 'history.compacted@1') return;
    for (const s of event.data.summaries) {
      let id = s.summaryId;
      let createdAt = new Date(event.recordedAt);
      let seq: number;
      let messageIds = s.messageIds;
      if (s.replacesSummaryIds.length > 0) {
        const replaced = await trx
          .selectFrom('summaries')
          .select(['summary_id', 'seq', 'created_at', 'message_ids'])
          .where('session_id', '=', event.streamId)
          .where('summary_id', 'in', s.replacesSummaryIds)
          .orderBy('seq')
          .execute();
        const oldest = replaced[0];
        if (!oldest)
          throw new InvalidEventError(event.type, [
            { path: 'summaries.replacesSummaryIds', message: `summaries ${s.replacesSummaryIds.join(', ')} not found` },
          ]);
        id = oldest.summary_id;
        createdAt = new Date(oldest.created_at);
        seq = oldest.seq;
        const covered = replaced.flatMap((r) => r.message_ids as string[]);
        await trx.deleteFrom('summaries').where('session_id', '=', event.streamId).where('summary_id', 'in', s.replacesSummaryIds).execute();
        messageIds = [...covered.filter((m) => !s.messageIds.includes(m)), ...s.messageIds];
      } else {
        const { max } = await trx
          .selectFrom('summaries')
          .select(sql<number | null>`max(seq)`.as('max'))
          .where('session_id', '=', event.streamId)
          .executeTakeFirstOrThrow();
        seq = Number(max ?? 0) + 1;
      }
      await trx
        .insertInto('summaries')
        .values({
          summary_id: id,
          tenant_id: event.tenantId,
          session_id: event.streamId,
          seq,
          content: s.content,
          message_ids: JSON.stringify(messageIds),
          truncated: s.truncated ?? false,
          created_at: createdAt,
        })
        .execute();
    }
  },
});
