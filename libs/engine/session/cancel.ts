import {
  type CommittedMessage,
  ConcurrencyError,
  type EventData,
  type EventStore,
  hasEnded,
  IdempotencyKeyTakenError,
  type IdempotencyRecord,
  type ReadModels,
} from '../../events';
import { ConflictError, NotFoundError } from '../../errors';
import { type IdempotentAnswer, priorAnswer, requestHash } from './idempotency';
import { SessionJournal } from '../journal/journal';
import { handOff } from '../execution/hand-off';
import type { Logger } from '../logging/logger';
import type { TurnProducer } from '../queue';
import type { DeltaBus } from '../live';
import type { CatalogGenerations } from '../catalog/catalog-generations';
import { keptTurn } from './kept-turn';

export interface CancelServiceDeps {
  store: EventStore;
  readModels: ReadModels;
  queue: TurnProducer;
  logger: Logger;
  /** Where the story text streamed so far is kept (`keepPartial`). */
  deltas: Pick<DeltaBus, 'recent'>;
  /** The plugin catalogs: a kept turn's messages are placed as its commit would place them. */
  generations: CatalogGenerations;
}

/** `POST /v1/executions/:id/cancel`. */
export interface CancelRequest {
  tenantId: string;
  executionId: string;
  /** Keep the story text streamed so far as the turn's text (default false: dropped, no turn committed). */
  keepPartial?: boolean;
  /** Who cancels (`tenant:<id>`), recorded in the event. */
  by: string;
  /** A repeat with the same key and body answers the first cancel and records nothing. */
  idempotencyKey?: string;
}

export interface CancelAnswer {
  executionId: string;
  turnId: string;
  status: 'cancelled';
  keepPartial: boolean;
  /** With `keepPartial` and story text streamed: the turn as kept (the player's input, the partial story text), as committed. */
  messages?: CommittedMessage[];
}

/** The execution ended before the cancel could: committed or failed (a cancelled one answers its cancel). */
export class ExecutionEndedError extends ConflictError {
  constructor(
    readonly executionId: string,
    readonly status: string,
  ) {
    super('EXECUTION_ENDED', `execution ${executionId} has already ended: ${status}; nothing was cancelled`);
  }
}

const MAX_APPEND_TRIES = 50;

const notFound = (executionId: string) => new NotFoundError('EXECUTION_NOT_FOUND', `execution ${executionId} not found`);

const answerOf = (data: EventData<'execution.cancelled@1'>): CancelAnswer => ({
  executionId: data.executionId,
  turnId: data.turnId,
  status: 'cancelled',
  keepPartial: data.keepPartial,
  ...(data.messages ? { messages: data.messages } : {}),
});

/**
 * Stop: ends a pending execution (queued, running or waiting) without its commit. The cancel is
 * appended at the version its journal was read at, only while the journal shows the execution
 * pending, so a cancel that races the commit (or a failure) ends as exactly one of the two: the
 * loser's append meets the other's event, and a worker's attempt is fenced out from then on
 * (`FencedOutError`) while the cancel, read again, answers 409 `EXECUTION_ENDED`. The worker
 * running the execution hears of the end (`covel_execution_ended`, its `ExecutionWaiter` watch)
 * and aborts its model call mid-stream. The session's next pending execution is enqueued at once.
 * A repeat (same key, or none) answers the first cancel; another tenant's execution is 404.
 */
export class CancelService {
  constructor(private readonly deps: CancelServiceDeps) {}

  async cancel(request: CancelRequest): Promise<IdempotentAnswer<CancelAnswer>> {
    const { tenantId, executionId, idempotencyKey, by } = request;
    const keepPartial = request.keepPartial ?? false;
    const idempotency: IdempotencyRecord | undefined =
      idempotencyKey === undefined
        ? undefined
        : { key: idempotencyKey, requestHash: requestHash({ operation: 'cancel-execution', sessionId: null, body: { executionId, keepPartial } }) };
    for (let tries = 0; ; tries++) {
      if (idempotency) {
        const prior = await priorAnswer(this.deps.store, tenantId, idempotency, (e) =>
          e.type === 'execution.cancelled@1' && e.data.executionId === executionId ? answerOf(e.data) : null,
        );
        if (prior) return { answer: prior, replayed: true };
      }
      const view = await this.deps.readModels.execution(tenantId, executionId);
      if (!view) throw notFound(executionId);
      if (view.status === 'cancelled') {
        const first = await this.deps.readModels.executionCancel(tenantId, view.sessionId, executionId);
        if (first) return { answer: answerOf(first), replayed: true };
      }
      if (hasEnded(view)) throw new ExecutionEndedError(executionId, view.status);
      const { after, events } = await this.deps.store.readPendingSuffix(tenantId, view.sessionId);
      const journal = new SessionJournal(events, after);
      const execution = journal.get(executionId);
      // ended between the two reads: the next pass reads how
      if (execution?.status !== 'pending') {
        if (tries >= MAX_APPEND_TRIES) throw new ExecutionEndedError(executionId, execution?.status ?? view.status);
        continue;
      }
      const messages = keepPartial
        ? await keptTurn(
            { deltas: this.deps.deltas, generations: this.deps.generations, store: this.deps.store },
            { sessionId: view.sessionId, execution, events },
          )
        : undefined;
      const data: EventData<'execution.cancelled@1'> = { executionId, turnId: execution.turnId, keepPartial, ...(messages ? { messages } : {}), by };
      try {
        const appended = await this.deps.store.append({
          tenantId,
          streamId: view.sessionId,
          expectedVersion: journal.version,
          events: [{ type: 'execution.cancelled@1', data }],
          ...(idempotency ? { idempotency } : {}),
        });
        journal.apply(appended.events);
      } catch (error) {
        // another append came first (the commit, a failure, a model call, another cancel): read again and decide again
        if ((error instanceof ConcurrencyError || error instanceof IdempotencyKeyTakenError) && tries < MAX_APPEND_TRIES) continue;
        throw error;
      }
      // the session takes its next input at once (the journal is the stream as the cancel left it)
      await handOff(this.deps, { tenantId, sessionId: view.sessionId }, journal);
      return { answer: answerOf(data), replayed: false };
    }
  }
}
