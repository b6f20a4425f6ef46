import { randomUUID } from 'node:crypto';
import type { EventStore, ReadModels } from '../../events';
import { ConflictError, NotFoundError } from '../../errors';
import { appendIdempotent } from './append-idempotent';
import { type IdempotentAnswer, requestHash } from './idempotency';
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

/** The session of a fresh resume (to enqueue it); a replay's answer has none. */
type PlannedResume = ResumeAnswer & { sessionId?: string };

const withoutSession = ({ executionId, turnId, resumeId }: PlannedResume): ResumeAnswer => ({ executionId, turnId, resumeId });

const notFound = (executionId: string) => new NotFoundError('EXECUTION_NOT_FOUND', `execution ${executionId} not found`);

/**
 * Resumes a waiting execution (spec §1, §3): appends `execution.resumed@1` with the payload (at the
 * version the journal was read at: of two resumes at once, one wins, the other finds nothing to
 * resume, 409) and enqueues the execution again: any worker claims a new attempt, which goes on
 * from the log with the continuation's input slots and protected range. (When the turn job that
 * recorded the suspension has not ended yet, the enqueue is kept and made anew as that job ends, so
 * the resume runs then; when its worker was killed before it ended, that job, handed to another
 * worker by the stalled-job check, goes on under the attempt it kept.)
 * Another tenant's or an unknown execution is 404; one that is not waiting (never suspended,
 * already resumed, ended) 409.
 */
export class ResumeService {
  constructor(private readonly deps: ResumeServiceDeps) {}

  async resume(request: ResumeRequest): Promise<IdempotentAnswer<ResumeAnswer>> {
    const { tenantId, executionId, payload, idempotencyKey } = request;
    const result = await appendIdempotent<PlannedResume>(this.deps.store, {
      tenantId,
      ...(idempotencyKey === undefined
        ? {}
        : { idempotency: { key: idempotencyKey, requestHash: requestHash({ operation: 'resume', sessionId: null, body: { executionId, payload } }) } }),
      replay: (e) =>
        e.type === 'execution.resumed@1' && e.data.executionId === executionId ? { executionId, turnId: e.data.turnId, resumeId: e.data.resumeId } : null,
      plan: async () => {
        const view = await this.deps.readModels.execution(tenantId, executionId);
        if (!view) throw notFound(executionId);
        const journal = await loadSessionJournal(this.deps, { tenantId, sessionId: view.sessionId });
        const execution = journal.get(executionId);
        const waiting = execution?.status === 'pending' ? waitingSuspension(execution) : undefined;
        if (!execution || !waiting) throw new ConflictError('EXECUTION_NOT_WAITING', `execution ${executionId} is not waiting for a resume (${view.status})`);
        if (!this.deps.queue.isAvailable()) throw queueUnavailable('the turn queue is unavailable; nothing was recorded, retry later');
        const resumeId = randomUUID();
        const { pluginId, runtimeId, step, toolCallId } = waiting;
        // at the version the journal was read at: of two resumes at once, one wins, the other reads again and finds nothing to resume
        return {
          streamId: view.sessionId,
          expectedVersion: journal.version,
          events: [
            {
              type: 'execution.resumed@1',
              data: { executionId, turnId: execution.turnId, resumeId, pluginId, runtimeId, step, toolCallId, payload: payload as never },
            },
          ],
          answer: { executionId, turnId: execution.turnId, resumeId, sessionId: view.sessionId },
        };
      },
    });
    if (result.replayed) return { answer: withoutSession(result.answer), replayed: true };
    try {
      await this.deps.queue.enqueue({ tenantId, sessionId: result.answer.sessionId!, executionId });
    } catch (error) {
      this.deps.logger.warn(`enqueue of resumed execution ${executionId} failed (${String(error)}); the sweeper will enqueue it`);
    }
    return { answer: withoutSession(result.answer), replayed: false };
  }
}
