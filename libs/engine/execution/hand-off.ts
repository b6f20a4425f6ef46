import type { SessionJournal } from '../journal/journal';
import type { TurnDeps } from './deps';
import { enqueueInOwnTrace } from './trace-spans';

/**
 * Called by whoever ended an execution (commit or failure), once that end is committed: enqueues
 * the session's next pending execution, if any. This is what keeps one execution per session
 * running at a time, in submission order, without polling.
 *
 * `journal` must be the stream exactly as it stood at that end: the journal of the append that
 * recorded it (appends are made at the journal's version, so nothing came in between), or one
 * read after it. No second read is needed for the race with a new input (SessionService.submitInput):
 * the input's append and the end are two appends to the same stream, one after the other. If the
 * input came first, the end was appended after it, at a journal that holds it, so it is enqueued
 * here. If the end came first, the API's read of the session's earliest pending execution (after
 * its own commit) no longer sees this execution and enqueues the input itself. Both may enqueue: the
 * enqueue is idempotent per execution. A failed enqueue (queue down) is logged: the sweeper enqueues
 * a session's earliest pending execution once it has been idle long enough.
 */
export async function handOff(
  deps: Pick<TurnDeps, 'queue' | 'logger'>,
  session: { tenantId: string; sessionId: string },
  journal: SessionJournal,
): Promise<void> {
  const next = journal.pending()[0];
  if (!next) return;
  try {
    // the next execution is its own turn: a trace of its own, not a child of this one's
    await enqueueInOwnTrace(deps.queue, { tenantId: session.tenantId, sessionId: session.sessionId, executionId: next.executionId }, 'hand-off');
  } catch (error) {
    deps.logger.warn(`hand-off to execution ${next.executionId} failed (${String(error)}); the sweeper will enqueue it`);
  }
}
