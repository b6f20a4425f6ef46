import type { EventStore, ReadModels } from '../../events';
import { ConflictError, NotFoundError } from '../../errors';
import { SessionNotFoundError } from '../errors';
import { appendIdempotent } from './append-idempotent';
import { type IdempotentAnswer, requestHash } from './idempotency';

export interface TurnRevertDeps {
  store: EventStore;
  readModels: ReadModels;
}

/** `POST /v1/sessions/:id/turns/:turnId/revert`. */
export interface RevertRequest {
  tenantId: string;
  sessionId: string;
  turnId: string;
  /** Who reverts, as the log records it (`tenant:<tenantId>`). */
  by: string;
  idempotencyKey?: string;
}

/** What the revert took out of the history (as `turn.reverted@1` records it). */
export interface RevertAnswer {
  turnId: string;
  turnIds: string[];
  executionIds: string[];
}

/**
 * Undo (issue 30): `turn.reverted@1` takes a turn and every later turn of the history out of it,
 * with every execution of those turns (each alternative, failed runs, activations recorded since
 * the turn's first input). One event: the read models are folds that skip what it names, and the
 * log keeps everything (the audit of a past request reads the log as it stood). Refused: another
 * tenant's session (404 `SESSION_NOT_FOUND`); a turn that is not in the history — unknown, an
 * alternative not selected, already reverted (404 `TURN_NOT_FOUND`); the opening, turn 0 (409
 * `OPENING_NOT_REVERTIBLE`); an execution of the session still queued or running (409
 * `TURN_RUNNING`). A compacted turn may be reverted (the read side drops summaries covering it).
 * Under an idempotency key (recorded in the event) a repeat answers the first revert.
 */
export class TurnRevertService {
  constructor(private readonly deps: TurnRevertDeps) {}

  async revert(request: RevertRequest): Promise<IdempotentAnswer<RevertAnswer>> {
    const { tenantId, sessionId, turnId, by, idempotencyKey } = request;
    if ((await this.deps.store.streamTenant(sessionId)) !== tenantId) throw new SessionNotFoundError(sessionId);
    return appendIdempotent(this.deps.store, {
      tenantId,
      ...(idempotencyKey === undefined
        ? {}
        : { idempotency: { key: idempotencyKey, requestHash: requestHash({ operation: 'revert-turn', sessionId, body: { turnId } }) } }),
      replay: (e) =>
        e.type === 'turn.reverted@1' && e.streamId === sessionId ? { turnId: e.data.turnId, turnIds: e.data.turnIds, executionIds: e.data.executionIds } : null,
      plan: async () => {
        // the version first: anything appended after the reads below makes the append lose and the pass run again
        const version = await this.deps.store.streamVersion(sessionId);
        const scope = await this.deps.readModels.revertScope(tenantId, sessionId, turnId);
        if (!scope) throw new NotFoundError('TURN_NOT_FOUND', `session ${sessionId} has no turn ${turnId} in its history (unknown, not selected, or reverted)`);
        if (scope.opening) throw new ConflictError('OPENING_NOT_REVERTIBLE', `turn ${turnId} is the session's opening (turn 0); it cannot be reverted`);
        const running = await this.deps.readModels.earliestPendingExecution(tenantId, sessionId);
        if (running) {
          throw new ConflictError(
            'TURN_RUNNING',
            `the session's turn is still running (execution ${running.executionId}); turns can be reverted once it has ended`,
          );
        }
        const answer = { turnId, turnIds: scope.turnIds, executionIds: scope.executionIds };
        return { streamId: sessionId, expectedVersion: version, events: [{ type: 'turn.reverted@1', data: { ...answer, by } }], answer };
      },
    });
  }
}
