import { sql, type Transaction } from 'kysely';
import { InvalidEventError } from '../errors';
import type { Database } from '../schema';
import type { InlineProjection } from './projection';
import { followingStory } from './story-fold';

/**
 * `summaries`, from `history.compacted@1` (turn_messages sets its own `compacted` marker). A merge
 * keeps the id, place and creation time of the oldest segment it replaces (so also its starting
 * turn: its messages come first); only the replaced segments are deleted, kept segments do not
 * change. The summaries an event merges must be the oldest saved ones, in story order (checked
 * with a bounded read); anything else fails the append (`InvalidEventError`, nothing changes).
 */
export const summariesProjection: InlineProjection = followingStory({
  name: 'summaries',
  handles: ['history.compacted@1'],
  tables: ['summaries'],
  async apply(trx, event) {
    if (event.type !== 'history.compacted@1') return;
    await checkReplacedAreOldest(
      trx,
      event.streamId,
      event.data.summaries.flatMap((s) => s.replacesSummaryIds),
    );
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

/** The summaries a compaction merges (all its segments', in order) are the session's oldest saved ones. */
async function checkReplacedAreOldest(trx: Transaction<Database>, sessionId: string, replaced: readonly string[]): Promise<void> {
  if (replaced.length === 0) return;
  const oldest = (
    await trx.selectFrom('summaries').select('summary_id').where('session_id', '=', sessionId).orderBy('seq').limit(replaced.length).execute()
  ).map((r) => r.summary_id);
  const unknown = replaced.filter((id) => !oldest.includes(id));
  if (unknown.length > 0) {
    throw new InvalidEventError('history.compacted@1', [
      { path: 'summaries.replacesSummaryIds', message: `summaries ${unknown.join(', ')} not found among the ${replaced.length} oldest saved` },
    ]);
  }
  if (replaced.some((id, i) => id !== oldest[i])) {
    throw new InvalidEventError('history.compacted@1', [
      { path: 'summaries.replacesSummaryIds', message: `summaries ${replaced.join(', ')} are not the oldest saved ones in story order (${oldest.join(', ')})` },
    ]);
  }
}
