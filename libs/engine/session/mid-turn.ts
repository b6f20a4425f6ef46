import { randomUUID } from 'node:crypto';
import type { EventStore, ReadModels } from '../../events';
import { ConflictError } from '../../errors';
import { SessionNotFoundError } from '../errors';
import { appendIdempotent } from './append-idempotent';
import { type IdempotentAnswer, requestHash } from './idempotency';
import { SessionJournal } from '../journal/journal';

export interface MidTurnRequest {
  tenantId: string;
  sessionId: string;
  text: string;
  idempotencyKey?: string;
}

/** The turn a mid-turn message joined, and the message's id (its row in `turn_messages` once committed). */
export interface MidTurnAnswer {
  executionId: string;
  turnId: string;
  messageId: string;
}

/**
 * A mid-turn message found no turn to join: the session has no player turn queued or running (it
 * committed or failed first). Nothing was recorded; the client may send the text as a new input.
 */
export class NoRunningTurnError extends ConflictError {
  constructor(sessionId: string) {
    super(
      'NO_RUNNING_TURN',
      `session ${sessionId} has no turn running: the mid-turn message was not recorded; send it as a new input (without midTurn) to start a turn`,
    );
  }
}

/**
 * Appends `player-input.mid-turn@1` to the session's earliest unfinished player turn (queued or
 * running; an activation's execution has no player text and is skipped), checked at the very
 * version it is appended at: when the turn commits or fails first, the append loses, the check
 * runs again on what came first, and the answer is `NoRunningTurnError` rather than a message
 * attached to an ended turn. The turn's runtimes read the message at their next model call (spec
 * §1, part of the protected current turn); the commit places it in order. Under an idempotency key
 * a repeat answers the first message and appends nothing.
 */
export async function submitMidTurnMessage(
  deps: { store: EventStore; readModels: ReadModels },
  request: MidTurnRequest,
): Promise<IdempotentAnswer<MidTurnAnswer>> {
  const { tenantId, sessionId, text, idempotencyKey } = request;
  const head = await deps.store.streamHead(sessionId);
  if (head.tenantId !== tenantId) throw new SessionNotFoundError(sessionId);
  const idempotency =
    idempotencyKey === undefined
      ? undefined
      : { key: idempotencyKey, requestHash: requestHash({ operation: 'submit-input', sessionId, body: { text, midTurn: true } }) };
  const messageId = randomUUID();
  let journal: SessionJournal | undefined;
  return appendIdempotent(deps.store, {
    tenantId,
    ...(idempotency ? { idempotency } : {}),
    replay: (e) =>
      e.type === 'player-input.mid-turn@1' && e.streamId === sessionId
        ? { executionId: e.data.executionId, turnId: e.data.turnId, messageId: e.data.messageId }
        : null,
    plan: async () => {
      if (journal) {
        // another append came first: read what it added, and check again
        journal.apply(await deps.store.readStream(sessionId, journal.version));
      } else {
        // the executions view is read after the stream head: an append since then makes ours lose and read again
        const pending = await deps.readModels.earliestPendingExecution(tenantId, sessionId);
        if (!pending) throw new NoRunningTurnError(sessionId);
        const from = pending.submittedVersion - 1;
        journal = new SessionJournal(await deps.store.readStream(sessionId, from), from);
      }
      const turn = journal.pending().find((e) => e.activation === undefined);
      if (!turn) throw new NoRunningTurnError(sessionId);
      return {
        streamId: sessionId,
        expectedVersion: journal.version,
        events: [{ type: 'player-input.mid-turn@1', data: { executionId: turn.executionId, turnId: turn.turnId, messageId, text } }],
        answer: { executionId: turn.executionId, turnId: turn.turnId, messageId },
      };
    },
  });
}
