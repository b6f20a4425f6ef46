import { randomUUID } from 'node:crypto';
import { ConcurrencyError, type EventStore, IdempotencyKeyTakenError, type IdempotencyRecord, type ReadModels } from '../../events';
import { ConflictError, NotFoundError } from '../../errors';
import { IdempotencyKeyMismatchError, type IdempotentAnswer, requestHash } from './idempotency';
import { waitingSuspension } from '../journal/journal';
import type { Logger } from '../logging/logger';
import { queueUnavailable, type TurnProducer } from '../queue';
import { loadSessionJournal } from './session-reads';

export interface ResumeServiceDeps {
  store: EventStore;
  readModels: ReadModels;
  queue: TurnProducer;
  logger: Logger;
}

/** `POST /v1/executions/:id/resume`: the payload answers the suspended tool call the execution waits on. */
export interface ResumeRequest {
  tenantId: string;
  executionId: string;
  payload: unknown;
  /** A repeat with the same key and body answers the first resume and records nothing. */
  idempotencyKey?: string;
}

export interface ResumeAnswer {
  executionId: string;
  turnId: string;
  resumeId: string;
}

const MAX_APPEND_TRIES = 50;

const notFound = (executionId: string) => new NotFoundError('EXECUTION_NOT_FOUND', `execution ${executionId} not found`);

/**
 * Resumes a waiting execution (spec §1, §3): appends `execution.resumed@1` with the payload (at the
 * version the journal was read at: of two resumes at once, one wins, the other finds nothing to
 * resume, 409) and enqueues the execution again: any worker claims a new attempt, which goes on
 * from the log with the continuation's input slots and protected range. Another tenant's or an
 * unknown execution is 404; one that is not waiting (never suspended, already resumed, ended) 409.
 */
export class ResumeService {
  constructor(private readonly deps: ResumeServiceDeps) {}

  async resume(request: ResumeRequest): Promise<IdempotentAnswer<ResumeAnswer>> {
    const { tenantId, executionId, payload, idempotencyKey } = request;
    const idempotency: IdempotencyRecord | undefined =
      idempotencyKey === undefined
        ? undefined
        : { key: idempotencyKey, requestHash: requestHash({ operation: 'resume', sessionId: null, body: { executionId, payload } }) };
    for (let tries = 0; ; tries++) {
      if (idempotency) {
        const prior = await this.deps.store.findByIdempotencyKey(tenantId, idempotency.key);
        if (prior) {
          const e = prior.event;
          if (prior.requestHash !== idempotency.requestHash || e.type !== 'execution.resumed@1' || e.data.executionId !== executionId)
            throw new IdempotencyKeyMismatchError();
          return { answer: { executionId, turnId: e.data.turnId, resumeId: e.data.resumeId }, replayed: true };
        }
      }
      const view = await this.deps.readModels.execution(tenantId, executionId);
      if (!view) throw notFound(executionId);
      const journal = await loadSessionJournal(this.deps, view.sessionId);
      const execution = journal.get(executionId);
      const waiting = execution?.status === 'pending' ? waitingSuspension(execution) : undefined;
      if (!execution || !waiting) throw new ConflictError('EXECUTION_NOT_WAITING', `execution ${executionId} is not waiting for a resume (${view.status})`);
      if (!this.deps.queue.isAvailable()) throw queueUnavailable('the turn queue is unavailable; nothing was recorded, retry later');
      const resumeId = randomUUID();
      const { pluginId, runtimeId, step, toolCallId } = waiting;
      try {
        await this.deps.store.append({
          tenantId,
          streamId: view.sessionId,
          expectedVersion: journal.version,
          events: [
            {
              type: 'execution.resumed@1',
              data: { executionId, turnId: execution.turnId, resumeId, pluginId, runtimeId, step, toolCallId, payload: payload as never },
            },
          ],
          ...(idempotency ? { idempotency } : {}),
        });
      } catch (error) {
        // another append came first (another resume, an input): read again and decide again
        if ((error instanceof ConcurrencyError || error instanceof IdempotencyKeyTakenError) && tries < MAX_APPEND_TRIES) continue;
        throw error;
      }
      try {
        await this.deps.queue.enqueue({ tenantId, sessionId: view.sessionId, executionId });
      } catch (error) {
        this.deps.logger.warn(`enqueue of resumed execution ${executionId} failed (${String(error)}); the sweeper will enqueue it`);
      }
      return { answer: { executionId, turnId: execution.turnId, resumeId }, replayed: false };
    }
  }
}
