import { sql, type Transaction } from 'kysely';
import type { StoredEvent } from '../event-types';
import type { Database } from '../schema';
import { readStoryLog } from '../story-log';
import { changesPath, PATH_EVENT_TYPES, storyEvents } from '../story-path';
import { eventByEvent, type EventByEventProjection, type InlineProjection, type StreamKeyedTable } from './projection';

/**
 * A session read model that follows the story path (issue 30): it applies its events one by one
 * as they are appended, and after an event that changes which events count (`changesPath`: a
 * revert, a selected alternative, a branch, an isolated regeneration's input, a failure, a cancel
 * — the very events after which `StoryFolds` folds again, so the SQL rows and the audit's fold
 * never part) it deletes the session's rows and folds them again from the log: `storyEvents` of
 * the session's story log up to that event (a branch's with its parent's read in front, re-keyed
 * to the branch). Rare events, so a fold of the whole session.
 */
export function followingStory<T extends StreamKeyedTable>(
  definition: EventByEventProjection<T> & {
    /** Checks a refold event against the rows before it (a throw fails the append: nothing changes). */
    check?: (trx: Transaction<Database>, event: StoredEvent) => Promise<void>;
  },
): InlineProjection {
  const { apply, handles, check, sqlFor, ...rest } = definition;
  return eventByEvent({
    ...rest,
    handles: [...new Set([...handles, ...PATH_EVENT_TYPES, 'player-input.submitted@1' as const])],
    // as `apply`: a refold has no SQL form (the append takes a transaction); an event it handles
    // only to see the path change (a player's input that does not) writes nothing
    sqlFor(event, ctx) {
      if (changesPath(event)) return undefined;
      if (!handles.includes(event.type)) return null;
      return sqlFor?.(event, ctx);
    },
    async apply(trx, event) {
      if (!changesPath(event)) {
        if (handles.includes(event.type)) await apply(trx, event);
        return;
      }
      await check?.(trx, event);
      for (const table of definition.tables) await sql`delete from ${sql.table(table)} where session_id = ${event.streamId}`.execute(trx);
      const log = await readStoryLog(trx, { tenantId: event.tenantId, sessionId: event.streamId, throughVersion: event.streamVersion });
      for (const e of storyEvents(log)) {
        if (handles.includes(e.type)) await apply(trx, e.streamId === event.streamId ? e : { ...e, streamId: event.streamId });
      }
    },
  });
}
