import { randomUUID } from 'node:crypto';
import { EngineError } from '../../errors';
import { ConcurrencyError, diagnosticText, type EventStore, type NewEvent } from '../../events';
import type { ProviderRegistry } from '../../providers';
import { ATTR, inSpan, SpanKind, SPAN, usageAttributes } from '../../telemetry';
import { isPermanentFailure } from '../errors';
import { jobLogFields, withLogScope } from '../logging';
import type { Logger } from '../logging/logger';
import { type EngineMetrics, timedAdapter } from '../metrics';
import type { JobAttempt, JobOutcome, WorldGenerationJob } from '../queue';
import type { WorldCreation } from '../world-creation';
import type { WorldService } from '../worlds';
import { generationModelCall } from './generation-call';
import { planGeneration } from './generation-plan';
import { type JobLog, readJobLog, recordedReplies } from './job-log';
import { recordableText } from './recordable-text';

export interface WorldGenerationRunnerDeps {
  store: EventStore;
  worlds: Pick<WorldService, 'create'>;
  providers: ProviderRegistry;
  creation: WorldCreation;
  logger: Logger;
  /** Times the model calls (`covel_model_call_*`); absent: not measured. */
  metrics?: EngineMetrics;
}

/**
 * The idempotency key of the world a job creates: one world per job, however often the job runs
 * (a worker killed after the world's append and before the job's `completed` runs it again and
 * finds that world). A unit separator (U+001F) in it: no client can send it (`Idempotency-Key`
 * refuses control characters), so no request can take a job's key.
 */
export const generatedWorldKey = (jobId: string) => `world-generation\u001f${jobId}`;

/** Appends that lost to another worker's, in a row, before the attempt gives up (it is retried). */
const MAX_CONFLICTS = 20;

const done: JobOutcome = { kind: 'done' };

/**
 * The worker's side of `POST /v1/worlds/generate`: the handler of world generation jobs. Each run
 * reads the job's stream and takes the next step `planGeneration` names, recording as it goes: a
 * call is appended (`call-requested`, with the exact wire body) before it is sent and its reply
 * (`call-responded`) after, so a retried or resumed job never asks the model again for a call
 * whose reply is recorded (a call recorded without one is sent again, with the recorded body).
 * A valid world is created under the job's own idempotency key, then the job is `completed`; after
 * the last repair round, a permanent failure or the last attempt it is `failed` with a code.
 */
export class WorldGenerationRunner {
  constructor(private readonly deps: WorldGenerationRunnerDeps) {}

  /** The queue handler (`QueueHandlers.world`). */
  readonly run = (job: WorldGenerationJob, attempt: JobAttempt): Promise<JobOutcome> =>
    withLogScope({ job: 'world-generation', ...jobLogFields(job) }, () => this.runJob(job, attempt));

  private async runJob(job: WorldGenerationJob, attempt: JobAttempt): Promise<JobOutcome> {
    let conflicts = 0;
    for (;;) {
      const log = await readJobLog(this.deps.store, job.tenantId, job.jobId);
      if (!log) {
        this.deps.logger.warn('world generation job has no request in the log: nothing to run');
        return done;
      }
      if (log.outcome) return done;
      try {
        await this.step(log);
      } catch (error) {
        if (error instanceof ConcurrencyError && ++conflicts <= MAX_CONFLICTS) continue;
        const last = attempt.attemptsMade + 1 >= attempt.maxAttempts;
        if (!last && !endsJob(error)) throw error;
        await this.fail(job, error);
        return done;
      }
    }
  }

  /** One step of the plan: a call sent (or recorded first), the world created, or the failure recorded. */
  private async step(log: JobLog): Promise<void> {
    // the job's world exists (an earlier run made it, perhaps from a document derived by another deploy): it is the job's
    const made = await this.jobWorld(log.tenantId, log.jobId);
    if (made) return this.complete(log, made);
    const plan = planGeneration(log.inputs, recordedReplies(log), this.deps.creation);
    if (plan.kind === 'call') {
      const recorded = log.calls[plan.call.round];
      if (recorded) return this.send(log, recorded.request);
      const binding = this.deps.providers.forSlot(log.inputs.slot);
      const body = binding.adapter.buildRequest(generationModelCall(plan.call, binding, log.inputs.maxOutputTokens));
      const { round, purpose, template, problems } = plan.call;
      await this.append(log, {
        type: 'world-generation.call-requested@1',
        data: {
          jobId: log.jobId,
          callId: randomUUID(),
          round,
          purpose,
          template,
          ...(problems ? { problems } : {}),
          slot: log.inputs.slot,
          provider: binding.adapter.protocol,
          model: binding.slot.model,
          body: JSON.stringify(body),
        },
      });
      return;
    }
    if (plan.kind === 'failed') {
      await this.append(log, { type: 'world-generation.failed@1', data: { jobId: log.jobId, code: plan.code, reason: plan.reason } });
      return;
    }
    // the model of the call whose reply made the world
    const model = log.calls[plan.repairRounds]!.request.model;
    const { answer } = await this.deps.worlds.create({
      tenantId: log.tenantId,
      document: plan.document,
      provenance: { kind: 'generated', jobId: log.jobId, model, template: 'world-generation' },
      idempotencyKey: generatedWorldKey(log.jobId),
    });
    await this.append(log, { type: 'world-generation.completed@1', data: { jobId: log.jobId, worldId: answer.id, repairRounds: plan.repairRounds } });
  }

  /**
   * The world made under the job's key, whatever the hash it was made with (another deploy may
   * derive the document differently): the key is the job's own, no request can take it.
   */
  private async jobWorld(tenantId: string, jobId: string): Promise<string | null> {
    const prior = await this.deps.store.findByIdempotencyKey(tenantId, generatedWorldKey(jobId));
    return prior?.event.type === 'world.created@1' ? prior.event.streamId : null;
  }

  /** Ends the job with the world it made (from the last recorded reply: no call follows the one that makes the world). */
  private async complete(log: JobLog, worldId: string): Promise<void> {
    const repairRounds = Math.max(0, recordedReplies(log).length - 1);
    await this.append(log, { type: 'world-generation.completed@1', data: { jobId: log.jobId, worldId, repairRounds } });
  }

  /** Sends a recorded call (its recorded body, byte for byte) and records the reply. */
  private async send(log: JobLog, request: JobLog['calls'][number]['request']): Promise<void> {
    const { adapter } = this.deps.providers.forSlot(request.slot);
    const body = JSON.parse(request.body) as Record<string, unknown>;
    const response = await inSpan(
      SPAN.modelCall,
      { kind: SpanKind.CLIENT, attributes: { [ATTR.provider]: adapter.protocol, [ATTR.model]: request.model, [ATTR.operation]: 'chat' } },
      async (span) => {
        const answered = await timedAdapter(this.deps.metrics, adapter, request.model).send(body);
        span.setAttributes(usageAttributes(answered.usage));
        return answered;
      },
    );
    const { inputTokens, outputTokens, cachedInputTokens } = response.usage;
    await this.append(log, {
      type: 'world-generation.call-responded@1',
      data: {
        jobId: log.jobId,
        callId: request.callId,
        finishReason: response.finishReason,
        text: recordableText(response.text),
        usage: { inputTokens, outputTokens, cachedInputTokens },
      },
    });
  }

  /** Appends at the version the step read (another worker's append in between: `ConcurrencyError`, the step is taken again). */
  private async append(log: JobLog, event: NewEvent): Promise<void> {
    await this.deps.store.append({ tenantId: log.tenantId, streamId: log.jobId, expectedVersion: log.version, events: [event] });
  }

  /**
   * Records the job's failure (unless it has ended meanwhile); a job whose world exists (made before
   * the error: its `completed` append failed, or another deploy's worker made it) is `completed` with it.
   */
  private async fail(job: WorldGenerationJob, error: unknown): Promise<void> {
    const code = error instanceof EngineError ? error.code : 'INTERNAL';
    const reason = diagnosticText(error instanceof Error ? error.message : String(error));
    for (let tries = 0; ; tries++) {
      const log = await readJobLog(this.deps.store, job.tenantId, job.jobId);
      if (!log || log.outcome) return;
      try {
        const made = await this.jobWorld(job.tenantId, job.jobId);
        if (made) {
          this.deps.logger.warn(`world generation: ${code} after the job's world was made; the job ends with it`, { err: error, worldId: made });
          await this.complete(log, made);
          return;
        }
        if (tries === 0) this.deps.logger.warn(`world generation failed for good: ${code}`, { err: error });
        await this.append(log, { type: 'world-generation.failed@1', data: { jobId: job.jobId, code, reason } });
        return;
      } catch (appendError) {
        if (!(appendError instanceof ConcurrencyError) || tries >= MAX_CONFLICTS) throw appendError;
      }
    }
  }
}

/** A failure another attempt cannot fix: a permanent one, and what the job's own idempotent create refuses. */
function endsJob(error: unknown): boolean {
  return isPermanentFailure(error) || (error instanceof EngineError && (error.category === 'unprocessable' || error.category === 'too-large'));
}
