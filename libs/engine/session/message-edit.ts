import type { EventStore, NewEvent, ReadModels, StoredEvent } from '../../events';
import { ConflictError, InvalidInputError, NotFoundError } from '../../errors';
import { SessionNotFoundError } from '../errors';
import { appendIdempotent } from './append-idempotent';
import { type IdempotentAnswer, requestHash } from './idempotency';
import type { TurnAlternativesService } from './turn-alternatives';

export interface MessageEditDeps {
  store: EventStore;
  readModels: ReadModels;
  /** Regenerating the edited turn (`regenerate: true`) is a retry of it with the edited input. */
  alternatives: TurnAlternativesService;
}

/** `PATCH /v1/sessions/:id/messages/:messageId`. */
export interface EditMessageRequest {
  tenantId: string;
  sessionId: string;
  messageId: string;
  /** The new text (validated by the caller against `message.edited@1`'s `text`). */
  text: string;
  /** Re-run the latest turn with the edited input (only its player input). */
  regenerate?: boolean;
  /** Who edits, as the log records it (`tenant:<tenantId>`). */
  by: string;
  idempotencyKey?: string;
}

export interface EditMessageAnswer {
  messageId: string;
  turnId: string;
  text: string;
  /** With `regenerate`: the execution that re-runs the turn. */
  execution?: { executionId: string; turnId: string };
}

/**
 * Edit (issue 30): `message.edited@1` gives a committed player input (`sourceType: player`) or story
 * text (`outputKind: story`) of the history new text; later requests read it, bookkeepers are not
 * run again, the log keeps the text first committed (the audit of an earlier request still derives
 * what was sent). Text the message already has records nothing. With `regenerate`, the latest
 * turn's player input is edited and the turn re-run with it in the same append (the edit and the
 * regeneration's input are one transaction: both or neither), as `POST …/retry` runs it.
 * Refused: another tenant's session (404 `SESSION_NOT_FOUND`), a message that is not in the
 * history — unknown, another tenant's, of a reverted turn or an alternative not selected (404
 * `MESSAGE_NOT_FOUND`); any other kind of message (409 `MESSAGE_NOT_EDITABLE`); `regenerate` on
 * anything but a turn's player input (400 naming `regenerate`); a compacted message (409
 * `MESSAGE_COMPACTED`); an execution of the session queued or running (409 `TURN_RUNNING`);
 * `regenerate` on an input of a turn that is not the latest (409 `NOT_LATEST_TURN`).
 */
export class MessageEditService {
  constructor(private readonly deps: MessageEditDeps) {}

  async edit(request: EditMessageRequest): Promise<IdempotentAnswer<EditMessageAnswer>> {
    const { tenantId, sessionId, messageId, text, by, idempotencyKey } = request;
    const regenerate = request.regenerate === true;
    if ((await this.deps.store.streamTenant(sessionId)) !== tenantId) throw new SessionNotFoundError(sessionId);
    const body = { messageId, text, ...(regenerate ? { regenerate } : {}) };
    const result = await appendIdempotent(this.deps.store, {
      tenantId,
      ...(idempotencyKey === undefined
        ? {}
        : { idempotency: { key: idempotencyKey, requestHash: requestHash({ operation: 'edit-message', sessionId, body }) } }),
      replay: (e) => this.recorded(e, { sessionId, messageId, regenerate }),
      plan: async () => {
        const version = await this.deps.store.streamVersion(sessionId);
        const message = await this.deps.readModels.historyMessage(tenantId, sessionId, messageId);
        if (!message) throw new NotFoundError('MESSAGE_NOT_FOUND', `session ${sessionId} has no message ${messageId} in its history`);
        const input = message.sourceType === 'player' ? await this.deps.readModels.playerInput(tenantId, sessionId, message.turnId) : null;
        if (message.sourceType !== 'player' && message.outputKind !== 'story') {
          throw new ConflictError('MESSAGE_NOT_EDITABLE', `message ${messageId} is neither a player input nor story text; only those can be edited`);
        }
        if (regenerate && input?.messageId !== messageId) {
          throw new InvalidInputError([{ path: 'regenerate', message: "only a turn's player input can be regenerated (this message is not one)" }]);
        }
        if (message.compacted) throw new ConflictError('MESSAGE_COMPACTED', `message ${messageId} is compacted into a summary; it can no longer be edited`);
        const running = await this.deps.readModels.earliestPendingExecution(tenantId, sessionId);
        if (running) {
          throw new ConflictError(
            'TURN_RUNNING',
            `the session's turn is still running (execution ${running.executionId}); messages can be edited once it has ended`,
          );
        }
        const events: NewEvent[] = text === message.text ? [] : [{ type: 'message.edited@1', data: { messageId, turnId: message.turnId, text, by } }];
        const answer: EditMessageAnswer = { messageId, turnId: message.turnId, text };
        if (regenerate) {
          const regeneration = await this.deps.alternatives.planRegeneration({ tenantId, sessionId, turnId: message.turnId, text });
          events.push(regeneration.event);
          answer.execution = regeneration.answer;
        }
        return { streamId: sessionId, expectedVersion: version, events, answer };
      },
    });
    if (result.answer.execution) await this.deps.alternatives.enqueueHead(tenantId, sessionId, result.answer.execution.executionId);
    return result;
  }

  /** The answer an edit made under the key recorded: its edit, and the regeneration's input in the same append (or alone, for text unchanged). */
  private async recorded(first: StoredEvent, asked: { sessionId: string; messageId: string; regenerate: boolean }): Promise<EditMessageAnswer | null> {
    const { sessionId, messageId, regenerate } = asked;
    if (first.streamId !== sessionId) return null;
    if (regenerate && first.type === 'player-input.submitted@1' && first.data.retryFromTurnId !== undefined) {
      return {
        messageId,
        turnId: first.data.retryFromTurnId,
        text: first.data.text,
        execution: { executionId: first.data.executionId, turnId: first.data.turnId },
      };
    }
    if (first.type !== 'message.edited@1' || first.data.messageId !== messageId) return null;
    const answer: EditMessageAnswer = { messageId, turnId: first.data.turnId, text: first.data.text };
    if (!regenerate) return answer;
    const [next] = await this.deps.store.readStream(sessionId, first.streamVersion, 1);
    // the regeneration's input, appended with the edit (one transaction)
    if (next?.type === 'player-input.submitted@1' && next.data.retryFromTurnId === first.data.turnId && next.data.text === first.data.text) {
      answer.execution = { executionId: next.data.executionId, turnId: next.data.turnId };
    }
    return answer;
  }
}
