import { randomUUID } from 'node:crypto';
import { ConcurrencyError, type EventStore, IdempotencyKeyTakenError, type ReadModels } from '../../events';
import { ConflictError } from '../../errors';
import { SessionNotFoundError } from '../errors';
import { type IdempotentAnswer, IdempotencyKeyMismatchError, requestHash } from './idempotency';
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

/** How many times the append is tried again when other appends to the session come first. */
const MAX_APPEND_TRIES = 50;

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
  if (idempotency) {
    const prior = await deps.store.findByIdempotencyKey(tenantId, idempotency.key);
    if (prior) {
      const e = prior.event;
      if (prior.requestHash !== idempotency.requestHash || e.type !== 'player-input.mid-turn@1' || e.streamId !== sessionId)
        throw new IdempotencyKeyMismatchError();
      return { answer: { executionId: e.data.executionId, turnId: e.data.turnId, messageId: e.data.messageId }, replayed: true };
    }
  }
  // the executions view is read after the stream head: an append since then makes ours lose and read again
  const pending = await deps.readModels.earliestPendingExecution(tenantId, sessionId);
  if (!pending) throw new NoRunningTurnError(sessionId);
  const from = pending.submittedVersion - 1;
  const journal = new SessionJournal(await deps.store.readStream(sessionId, from), from);
  const messageId = randomUUID();
  for (let tries = 0; ; tries++) {
    const turn = journal.pending().find((e) => e.activation === undefined);
    if (!turn) throw new NoRunningTurnError(sessionId);
    try {
      await deps.store.append({
        tenantId,
        streamId: sessionId,
        expectedVersion: journal.version,
        events: [{ type: 'player-input.mid-turn@1', data: { executionId: turn.executionId, turnId: turn.turnId, messageId, text } }],
        idempotency,
      });
      return { answer: { executionId: turn.executionId, turnId: turn.turnId, messageId }, replayed: false };
    } catch (error) {
      if (error instanceof IdempotencyKeyTakenError && idempotency) {
        // a concurrent request with the same key won: answer what it recorded
        return submitMidTurnMessage(deps, request);
      }
      if (!(error instanceof ConcurrencyError) || tries >= MAX_APPEND_TRIES) throw error;
      journal.apply(await deps.store.readStream(sessionId, journal.version));
    }
  }
}
