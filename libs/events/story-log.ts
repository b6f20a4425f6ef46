import type { Kysely } from 'kysely';
import { toStoredEvent } from './stored-event';
import type { StoredEvent } from './event-types';
import type { Database } from './schema';
import { branchRead } from './story-path';

/** The event types the story's read models fold, and those that decide which events count (`storyEvents`; the barrier's record says which execution made a compaction). */
export const STORY_EVENT_TYPES = [
  'session.opened@1',
  'session.branched@1',
  'player-input.submitted@1',
  'runtime.activated@1',
  'turn.committed@1',
  'turn.superseded@1',
  'turn.reverted@1',
  'message.edited@1',
  'execution.failed@1',
  'execution.cancelled@1',
  'history.compacted@1',
  'compaction.barrier-passed@1',
  'plugin-data.written@1',
  'plugin-data.deleted@1',
] as const satisfies readonly StoredEvent['type'][];

/**
 * A session's story events up to `throughVersion` (default: all), oldest first, for a fold that
 * starts from nothing: for a branch, its parent's read (`branchRead`: the parent's log up to the
 * branch, turns after the branch point reverted) comes first, then its own events. Events of the
 * parent keep the parent's stream id (a fold that writes rows keys them by the session it folds).
 */
export async function readStoryLog(executor: Kysely<Database>, at: { tenantId: string; sessionId: string; throughVersion?: number }): Promise<StoredEvent[]> {
  const rows = await executor
    .selectFrom('events')
    .selectAll()
    .where('stream_id', '=', at.sessionId)
    .where('tenant_id', '=', at.tenantId)
    .$if(at.throughVersion !== undefined, (q) => q.where('stream_version', '<=', at.throughVersion!))
    .where('type', 'in', [...STORY_EVENT_TYPES])
    .orderBy('stream_version')
    .execute();
  const own = rows.map(toStoredEvent);
  return [...(await readInheritedStory(executor, own)), ...own];
}

/**
 * What a session inherits from its parent when it is a branch (its log starts with
 * `session.branched@1`): the parent's story read up to the branch (`branchRead`); none otherwise.
 * `own`: the session's events (its first ones are enough).
 */
export async function readInheritedStory(executor: Kysely<Database>, own: readonly StoredEvent[]): Promise<StoredEvent[]> {
  const branched = own.find((e) => e.type === 'session.branched@1');
  if (branched?.type !== 'session.branched@1') return [];
  const parent = await readStoryLog(executor, {
    tenantId: branched.tenantId,
    sessionId: branched.data.parentSessionId,
    throughVersion: branched.data.parentVersion,
  });
  return branchRead(parent, { atTurnId: branched.data.atTurnId, at: branched });
}
