import { randomUUID } from 'node:crypto';
import { type EventStore, hasEnded, type NewEvent, type ReadModels, type TurnAlternativeRecord, type TurnAlternativesRecord } from '../../events';
import { ConflictError, NotFoundError } from '../../errors';
import { truncateText } from '../../text';
import { SessionNotFoundError } from '../errors';
import { appendIdempotent } from './append-idempotent';
import { type IdempotentAnswer, requestHash } from './idempotency';
import type { Logger } from '../logging/logger';
import { queueUnavailable, type TurnProducer } from '../queue';

export interface TurnAlternativesDeps {
  store: EventStore;
  queue: TurnProducer;
  readModels: ReadModels;
  logger: Logger;
}

/** Code points of an alternative's story text the listing shows. */
export const ALTERNATIVE_PREVIEW_CHARS = 200;

/** One alternative as the API lists it; its id is its execution id. */
export interface TurnAlternativeView {
  id: string;
  turnId: string;
  createdAt: string;
  /** `cancelled`: stopped (`POST /v1/executions/:id/cancel`) before it committed. */
  status: 'running' | 'committed' | 'failed' | 'cancelled';
  /** The first code points of its story text (empty while it runs, or when it has none). */
  preview: string;
  selected: boolean;
}

/**
 * Regenerating the latest turn and choosing among its alternatives (issue 16; spec §1 "This turn's
 * story text", §4 `retryFromTurnId`). A turn's alternatives are the turn first played and each
 * regeneration of it; their group is named by the first one's turn id (`alternativeOf`), and each
 * alternative by its execution id. Exactly one of them is in the history (`turn_messages`): the
 * selected one; the log keeps all.
 */
export class TurnAlternativesService {
  constructor(private readonly deps: TurnAlternativesDeps) {}

  /**
   * Re-runs the latest turn from its source: a new execution (`player-input.submitted@1` with
   * `retryFromTurnId` = the selected alternative's turn, the typed input as the history has it now
   * (edited, `message.edited@1`, or as typed) and the same form values), which reads the history
   * without that turn and, when it commits, takes its place (`turn.superseded@1`). `turnId` may name
   * any alternative of the latest turn. Refused: another tenant's session or an unknown turn (404);
   * a turn that is not the latest, a running execution in the session, a latest turn already
   * compacted (409). Under an idempotency key (recorded in the input's event) a repeat answers the
   * first execution.
   */
  async retry(request: {
    tenantId: string;
    sessionId: string;
    turnId: string;
    idempotencyKey?: string;
  }): Promise<IdempotentAnswer<{ executionId: string; turnId: string }>> {
    const { tenantId, sessionId, turnId, idempotencyKey } = request;
    await this.requireSession(tenantId, sessionId);
    const result = await appendIdempotent(this.deps.store, {
      tenantId,
      ...(idempotencyKey === undefined
        ? {}
        : { idempotency: { key: idempotencyKey, requestHash: requestHash({ operation: 'retry-turn', sessionId, body: { turnId } }) } }),
      replay: (e) => (e.type === 'player-input.submitted@1' && e.streamId === sessionId ? { executionId: e.data.executionId, turnId: e.data.turnId } : null),
      plan: async () => {
        const version = await this.deps.store.streamVersion(sessionId);
        const regeneration = await this.planRegeneration({ tenantId, sessionId, turnId });
        return { streamId: sessionId, expectedVersion: version, events: [regeneration.event], answer: regeneration.answer };
      },
    });
    await this.enqueueHead(tenantId, sessionId, result.answer.executionId);
    return result;
  }

  /**
   * The input that regenerates the latest turn (`turnId`: any of its alternatives), checked as
   * `retry` checks it: its text is `text` when given (an edit's, `PATCH …/messages/:id` with
   * `regenerate`), else the source turn's input as the history has it now. Nothing is appended here.
   */
  async planRegeneration(request: {
    tenantId: string;
    sessionId: string;
    turnId: string;
    text?: string;
  }): Promise<{ event: NewEvent; answer: { executionId: string; turnId: string } }> {
    const { tenantId, sessionId, turnId } = request;
    if (!this.deps.queue.isAvailable()) throw queueUnavailable('the turn queue is unavailable; nothing was recorded, retry later');
    const { group, latest } = await this.latestGroup(tenantId, sessionId, turnId, 'regenerated');
    const source = group.alternatives.find((a) => a.turnId === latest)!;
    const text = request.text ?? (await this.deps.readModels.playerInput(tenantId, sessionId, source.turnId))?.text ?? source.text;
    const executionId = randomUUID();
    const newTurnId = randomUUID();
    const event: NewEvent = {
      type: 'player-input.submitted@1',
      data: {
        executionId,
        turnId: newTurnId,
        messageId: randomUUID(),
        // an execution retried after a commit keeps its original typed input values (spec §1), as edited since
        text,
        ...(source.formValues ? { formValues: source.formValues } : {}),
        retryFromTurnId: source.turnId,
        alternativeOf: group.alternativeOf,
        // it reads the session's state as it stood before the turn (plugin data too), and keeps its own
        isolated: true,
      },
    };
    return { event, answer: { executionId, turnId: newTurnId } };
  }

  /** The alternatives of a player turn (any of them names the group), oldest first. */
  async list(request: { tenantId: string; sessionId: string; turnId: string }): Promise<{ turnId: string; alternatives: TurnAlternativeView[] }> {
    await this.requireSession(request.tenantId, request.sessionId);
    const group = await this.group(request.tenantId, request.sessionId, request.turnId);
    const statuses = await Promise.all(group.alternatives.map((a) => this.deps.readModels.execution(request.tenantId, a.executionId)));
    return {
      turnId: group.alternativeOf,
      alternatives: group.alternatives.map((a, i) => ({
        id: a.executionId,
        turnId: a.turnId,
        createdAt: a.createdAt,
        status: a.messages ? 'committed' : endedWithout(statuses[i]?.status),
        preview: preview(a),
        selected: a.selected,
      })),
    };
  }

  /**
   * Puts an alternative of the latest turn in the history in place of the selected one:
   * `turn.superseded@1` (cause `select`) carrying its committed messages. The alternative is named
   * by its id (`alternativeId`, an execution id) or by its number (`alternativeNumber`, 1-based, in
   * the order `list` gives: 1 is the turn as first played). Selecting the one already selected
   * records nothing. Under an idempotency key (recorded in the event) a repeat answers the first
   * selection. Refused: an unknown turn or alternative, a number out of range (404), one that has
   * not committed, a turn that is not the latest, a running execution (409).
   */
  async select(
    request: { tenantId: string; sessionId: string; turnId: string; idempotencyKey?: string } & (
      { alternativeId: string; alternativeNumber?: undefined } | { alternativeNumber: number; alternativeId?: undefined }
    ),
  ): Promise<IdempotentAnswer<{ alternativeId: string; turnId: string }>> {
    const { tenantId, sessionId, turnId, idempotencyKey } = request;
    await this.requireSession(tenantId, sessionId);
    const named = request.alternativeId !== undefined ? { alternativeId: request.alternativeId } : { alternativeNumber: request.alternativeNumber };
    return appendIdempotent(this.deps.store, {
      tenantId,
      ...(idempotencyKey === undefined
        ? {}
        : { idempotency: { key: idempotencyKey, requestHash: requestHash({ operation: 'select-alternative', sessionId, body: { turnId, ...named } }) } }),
      replay: (e) => (e.type === 'turn.superseded@1' && e.streamId === sessionId ? { alternativeId: e.data.byExecutionId, turnId: e.data.byTurnId } : null),
      plan: async () => {
        const version = await this.deps.store.streamVersion(sessionId);
        const { group, latest } = await this.latestGroup(tenantId, sessionId, turnId, 'selected among');
        const chosen =
          named.alternativeId !== undefined
            ? group.alternatives.find((a) => a.executionId === named.alternativeId)
            : group.alternatives[named.alternativeNumber! - 1];
        if (!chosen) {
          const which = named.alternativeId ?? `number ${named.alternativeNumber} (it has ${group.alternatives.length})`;
          throw new NotFoundError('ALTERNATIVE_NOT_FOUND', `turn ${group.alternativeOf} has no alternative ${which}`);
        }
        if (!chosen.messages)
          throw new ConflictError('ALTERNATIVE_NOT_COMMITTED', `alternative ${chosen.executionId} has not committed (it is running or failed)`);
        const answer = { alternativeId: chosen.executionId, turnId: chosen.turnId };
        if (chosen.turnId === latest) return { streamId: sessionId, expectedVersion: version, events: [], answer };
        const event: NewEvent = {
          type: 'turn.superseded@1',
          data: {
            alternativeOf: group.alternativeOf,
            turnId: latest,
            byTurnId: chosen.turnId,
            byExecutionId: chosen.executionId,
            cause: 'select',
            messages: chosen.messages,
          },
        };
        return { streamId: sessionId, expectedVersion: version, events: [event], answer };
      },
    });
  }

  /**
   * The alternatives of `turnId` when they are the latest turn's and nothing runs: the group and
   * the selected alternative's turn id. `what` says what was asked in the 409's message.
   */
  private async latestGroup(tenantId: string, sessionId: string, turnId: string, what: string): Promise<{ group: TurnAlternativesRecord; latest: string }> {
    const group = await this.group(tenantId, sessionId, turnId);
    const running = await this.deps.readModels.earliestPendingExecution(tenantId, sessionId);
    if (running) {
      throw new ConflictError(
        'TURN_RUNNING',
        `the session's turn is still running (execution ${running.executionId}); the latest turn can be ${what} once it has ended`,
      );
    }
    const latest = await this.deps.readModels.latestTurn(tenantId, sessionId);
    if (!latest || !group.alternatives.some((a) => a.turnId === latest.turnId)) {
      const which = latest ? `the latest turn is ${latest.turnId}` : 'the history has no turn';
      throw new ConflictError('NOT_LATEST_TURN', `turn ${turnId} is not the latest turn (${which}); only the latest turn can be ${what}`);
    }
    if (latest.compacted) throw new ConflictError('TURN_COMPACTED', `turn ${latest.turnId} is already compacted into a summary; it can no longer be ${what}`);
    return { group, latest: latest.turnId };
  }

  private async group(tenantId: string, sessionId: string, turnId: string): Promise<TurnAlternativesRecord> {
    const group = await this.deps.readModels.turnAlternatives(tenantId, sessionId, turnId);
    if (!group) throw new NotFoundError('TURN_NOT_FOUND', `session ${sessionId} has no player turn ${turnId}`);
    return group;
  }

  private async requireSession(tenantId: string, sessionId: string) {
    if ((await this.deps.store.streamTenant(sessionId)) !== tenantId) throw new SessionNotFoundError(sessionId);
  }

  /**
   * Enqueues the session's earliest pending execution unless `executionId` has ended (as
   * `SessionService` does for an input): a repeat after a crash between the append and the enqueue
   * still gets its turn queued.
   */
  async enqueueHead(tenantId: string, sessionId: string, executionId: string) {
    const view = await this.deps.readModels.execution(tenantId, executionId);
    if (view && hasEnded(view)) return;
    const head = await this.deps.readModels.earliestPendingExecution(tenantId, sessionId);
    try {
      await this.deps.queue.enqueue({ tenantId, sessionId, executionId: head?.executionId ?? executionId });
    } catch (error) {
      this.deps.logger.warn(`enqueue of execution ${executionId} failed (${String(error)}); the input is recorded and the sweeper will enqueue it`);
    }
  }
}

/** The status of an alternative without a commit: failed, cancelled, or still running. */
function endedWithout(status: string | undefined): 'failed' | 'cancelled' | 'running' {
  return status === 'failed' || status === 'cancelled' ? status : 'running';
}

/** The alternative's story text (its story outputs, in order), its first code points. */
function preview(a: TurnAlternativeRecord): string {
  const story = (a.messages ?? [])
    .filter((m) => m.outputKind === 'story')
    .map((m) => m.text)
    .join('\n\n');
  return truncateText(story, ALTERNATIVE_PREVIEW_CHARS);
}
