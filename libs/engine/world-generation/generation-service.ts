import { randomUUID } from 'node:crypto';
import { InvalidInputError, NotFoundError } from '../../errors';
import { type EventStore, IdempotencyKeyTakenError, type WorldGenerationReads, type WorldGenerationRow, type WorldGenerationStatus } from '../../events';
import type { ProviderRegistry } from '../../providers';
import type { Logger } from '../logging/logger';
import { queueUnavailable, type TurnProducer } from '../queue';
import { type IdempotentAnswer, priorAnswer, requestHash } from '../session/idempotency';
import { CreateWorldInput, type WorldCreation } from '../world-creation';
import { generationModelCall } from './generation-call';
import { planGeneration } from './generation-plan';
import { readJobLog, recordedReplies } from './job-log';

/** The slot whose model writes a world when the request names none. */
export const DEFAULT_GENERATION_SLOT = 'story';

/** Most time one long-poll may wait (`waitMs`), as for executions. */
export const MAX_GENERATION_WAIT_MS = 30_000;

/** How often a long-poll reads the job again while it waits. */
const WAIT_POLL_MS = 200;

/** What a job may take, from the deployment's settings (`COVEL_WORLD_GENERATION_*`), recorded with each job. */
export interface WorldGenerationSettings {
  /** The most repair rounds after the draft. */
  repairRounds: number;
  /** Output limit of each call, in tokens. */
  maxOutputTokens: number;
}

export interface WorldGenerationServiceDeps {
  store: EventStore;
  reads: WorldGenerationReads;
  queue: TurnProducer;
  creation: WorldCreation;
  /** The model slots (a request's `slot` must be one) and, for an audit, their adapters (bodies built, never sent). */
  providers: ProviderRegistry;
  /** The plugin ids of the current catalog (a request's `plugins` must be among them). */
  pluginIds: () => ReadonlySet<string>;
  settings: WorldGenerationSettings;
  logger: Logger;
}

export interface GenerateWorldRequest {
  tenantId: string;
  description: string;
  locale: string;
  slot?: string;
  plugins?: readonly string[];
  idempotencyKey?: string;
}

/** A job's progress as the API answers it. */
export interface WorldGenerationView {
  jobId: string;
  status: WorldGenerationStatus;
  /** `queued`, `drafting`, `repairing 1/2` (round of rounds), `done`, `failed`. */
  progress: string;
  /** The round of the last call (0: the draft). */
  round: number;
  /** The most repair rounds the job may take. */
  rounds: number;
  /** The world made (`done`). */
  worldId: string | null;
  /** Why it failed (`failed`): a code and a reason. */
  error: { code: string; reason: string } | null;
  createdAt: string;
  updatedAt: string;
}

/** One recorded call of a job, derived again from the job's request and the replies recorded before it. */
export interface WorldGenerationCallAudit {
  callId: string;
  round: number;
  purpose: string;
  template: string;
  provider: string;
  model: string;
  recordedBytes: number;
  identical: boolean;
  /** The first UTF-16 offset where the derived body differs (null: identical). */
  firstMismatchAt: number | null;
}

export interface WorldGenerationAudit {
  jobId: string;
  /** Every call's wire body derived again is the recorded one, byte for byte. */
  identical: boolean;
  calls: WorldGenerationCallAudit[];
}

export class WorldGenerationNotFoundError extends NotFoundError {
  constructor(readonly jobId: string) {
    super('WORLD_GENERATION_NOT_FOUND', `world generation job ${jobId} not found`);
  }
}

const ENDED: readonly WorldGenerationStatus[] = ['done', 'failed'];

/**
 * The API's side of world creation from a description (`POST /v1/worlds/generate`): it checks and
 * records the request (`world-generation.requested@1`, one stream per job) and enqueues the job; a
 * worker runs it (`WorldGenerationRunner`), never this process: nothing here calls a model. It
 * answers the job's progress (tenant-scoped: another tenant's job is not found) and its audit.
 */
export class WorldGenerationService {
  constructor(private readonly deps: WorldGenerationServiceDeps) {}

  async request(request: GenerateWorldRequest): Promise<IdempotentAnswer<{ jobId: string }>> {
    const { tenantId } = request;
    const input = CreateWorldInput.safeParse({ description: request.description, locale: request.locale });
    if (!input.success) throw new InvalidInputError(input.error.issues.map((i) => ({ path: i.path.join('.') || '(body)', message: i.message })));
    const slot = request.slot ?? DEFAULT_GENERATION_SLOT;
    const slots = Object.keys(this.deps.providers.config.slots);
    if (!slots.includes(slot))
      throw new InvalidInputError([{ path: 'slot', message: `unknown model slot "${slot}" (llm.toml has ${slots.join(', ')})` }], 'UNKNOWN_SLOT');
    const plugins = request.plugins === undefined ? undefined : [...new Set(request.plugins)];
    if (plugins) {
      const known = this.deps.pluginIds();
      const unknown = plugins.flatMap((id, i) => (known.has(id) ? [] : [{ path: `plugins.${i}`, message: `no plugin "${id}"` }]));
      if (unknown.length > 0) throw new InvalidInputError(unknown, 'UNKNOWN_PLUGIN');
    }
    // the template renders for this request (a prompt root without it fails here, not in the worker)
    this.deps.creation.generationRequest(input.data);
    const { description, locale, maxCharacters, maxLoreChars } = input.data;
    const body = { description, locale, slot, ...(plugins ? { plugins } : {}) };
    const idempotency =
      request.idempotencyKey === undefined
        ? undefined
        : { key: request.idempotencyKey, requestHash: requestHash({ operation: 'generate-world', sessionId: null, body }) };
    for (let tries = 0; ; tries++) {
      if (idempotency) {
        const prior = await priorAnswer(this.deps.store, tenantId, idempotency, (e) => (e.type === 'world-generation.requested@1' ? e.streamId : null));
        if (prior) {
          const row = await this.deps.reads.job(tenantId, prior);
          // a crash between the append and the enqueue: a repeat enqueues it (idempotent per job)
          if (row && !ENDED.includes(row.status)) await this.enqueue({ tenantId, jobId: prior });
          return { answer: { jobId: prior }, replayed: true };
        }
      }
      // a repeat is answered above even with the queue away; a new job is not recorded then
      if (!this.deps.queue.isAvailable()) throw queueUnavailable('the queue is unavailable; nothing was recorded, retry later');
      const jobId = randomUUID();
      const { repairRounds, maxOutputTokens } = this.deps.settings;
      try {
        await this.deps.store.append({
          tenantId,
          streamId: jobId,
          expectedVersion: 0,
          events: [{ type: 'world-generation.requested@1', data: { jobId, ...body, repairRounds, maxOutputTokens, maxCharacters, maxLoreChars } }],
          idempotency,
        });
      } catch (error) {
        if (!(error instanceof IdempotencyKeyTakenError) || tries >= 20) throw error;
        continue;
      }
      await this.enqueue({ tenantId, jobId });
      return { answer: { jobId }, replayed: false };
    }
  }

  /** The job's progress now; `WorldGenerationNotFoundError` for an unknown job or another tenant's. */
  async view(tenantId: string, jobId: string): Promise<WorldGenerationView> {
    const row = await this.deps.reads.job(tenantId, jobId);
    if (!row) throw new WorldGenerationNotFoundError(jobId);
    return generationView(row);
  }

  /** The job once it has ended (`done` or `failed`), or its progress after `timeoutMs` (or when `signal` aborts). */
  async wait(request: { tenantId: string; jobId: string; timeoutMs: number; signal?: AbortSignal }): Promise<WorldGenerationView> {
    const deadline = Date.now() + Math.min(Math.max(0, request.timeoutMs), MAX_GENERATION_WAIT_MS);
    for (;;) {
      const view = await this.view(request.tenantId, request.jobId);
      const left = deadline - Date.now();
      if (ENDED.includes(view.status) || left <= 0 || request.signal?.aborted) return view;
      await pause(Math.min(WAIT_POLL_MS, left), request.signal);
    }
  }

  /**
   * Derives every recorded call of the job again — the plan from the job's request and the replies
   * recorded before the call, the wire body from the slot's adapter — and compares it with the
   * body recorded in `world-generation.call-requested@1`, byte for byte. Nothing is sent.
   */
  async audit(tenantId: string, jobId: string): Promise<WorldGenerationAudit> {
    const log = await readJobLog(this.deps.store, tenantId, jobId);
    if (!log) throw new WorldGenerationNotFoundError(jobId);
    const replies = recordedReplies(log);
    const calls = log.calls.map(({ request }, round): WorldGenerationCallAudit => {
      const plan = planGeneration(log.inputs, replies.slice(0, round), this.deps.creation);
      let rebuilt = '';
      if (plan.kind === 'call' && plan.call.round === round) {
        const binding = this.deps.providers.forSlot(request.slot);
        rebuilt = JSON.stringify(binding.adapter.buildRequest(generationModelCall(plan.call, binding, log.inputs.maxOutputTokens)));
      }
      const identical = rebuilt === request.body;
      return {
        callId: request.callId,
        round,
        purpose: request.purpose,
        template: request.template,
        provider: request.provider,
        model: request.model,
        recordedBytes: Buffer.byteLength(request.body),
        identical,
        firstMismatchAt: identical ? null : firstMismatch(request.body, rebuilt),
      };
    });
    return { jobId, identical: calls.every((c) => c.identical), calls };
  }

  private async enqueue(job: { tenantId: string; jobId: string }) {
    try {
      await this.deps.queue.enqueueWorldGeneration(job);
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      this.deps.logger.warn(`enqueue of world generation ${job.jobId} failed (${reason}); the job is recorded and the sweeper will enqueue it`);
    }
  }
}

export function generationView(row: WorldGenerationRow): WorldGenerationView {
  const progress = row.status === 'repairing' ? `repairing ${row.round}/${row.rounds}` : row.status;
  return {
    jobId: row.jobId,
    status: row.status,
    progress,
    round: row.round,
    rounds: row.rounds,
    worldId: row.worldId,
    error: row.error,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  };
}

/** Whether the job has ended (`done` or `failed`). */
export const generationEnded = (view: Pick<WorldGenerationView, 'status'>) => ENDED.includes(view.status);

function firstMismatch(a: string, b: string): number {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return i;
}

function pause(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}
