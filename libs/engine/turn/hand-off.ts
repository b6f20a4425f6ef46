import type { SessionJournal } from '../journal';
import type { TurnDeps } from './deps';

/**
 * Called by whoever ended an execution (commit or failure), once that end is committed: reads the
 * stream after it into the journal (inputs appended meanwhile), then enqueues the session's next pending execution, if any. This is what keeps one
 * execution per session running at a time, in submission order, without polling.
 *
 * The race with a new input (SessionService.submitInput) is safe: the input's append and this end
 * are two commits on the same stream, one after the other, and each side reads after its own
 * commit. If the input committed first, the journal read here (after the end) holds it and this
 * enqueues it. If the end committed first, the API's read of the session's earliest pending
 * execution (after the input) no longer sees this execution and enqueues the input itself. Both
 * may enqueue: the enqueue is idempotent per execution. A failed enqueue (queue down) is logged:
 * the sweeper enqueues a session's earliest pending execution once it has been idle long enough.
 */
export async function handOff(
  deps: Pick<TurnDeps, 'store' | 'queue' | 'logger'>,
  session: { tenantId: string; sessionId: string },
  journal: SessionJournal,
): Promise<void> {
  // the read after our own commit that the race above relies on
  journal.apply(await deps.store.readStream(session.sessionId, journal.version));
  const next = journal.pending()[0];
  if (!next) return;
  try {
    await deps.queue.enqueue({ tenantId: session.tenantId, sessionId: session.sessionId, executionId: next.executionId });
  } catch (error) {
    deps.logger.warn(`hand-off to execution ${next.executionId} failed (${String(error)}); the sweeper will enqueue it`);
  }
}
