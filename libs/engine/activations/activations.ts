import { ConcurrencyError, type EventStore, IdempotencyKeyTakenError, type IdempotencyRecord, type NewEvent, type ReadModels } from '../../events';
import { type ActivationPayload, activationEvents, emittedEventActivations, type StartedActivation } from './activation-events';
import { InvalidInputError } from '../../errors';
import { SessionNotFoundError } from '../errors';
import { IdempotencyKeyMismatchError, type IdempotentAnswer, requestHash } from '../session/idempotency';
import type { Logger } from '../logging/logger';
import { queueUnavailable, type TurnProducer } from '../queue';
import type { CatalogRuntime, RuntimeCatalog } from '../catalog/runtime-catalog';
import { readSessionCreated } from '../session/session-reads';

export interface ActivationServiceDeps {
  store: EventStore;
  queue: TurnProducer;
  readModels: ReadModels;
  /** The current plugin catalog (read at each activation: a reload replaces it). */
  catalog: () => RuntimeCatalog;
  logger: Logger;
}

/** A player's request to run a `schedule.trigger: manual` runtime (`POST /v1/sessions/:id/activations`). */
export interface ManualActivationRequest {
  tenantId: string;
  sessionId: string;
  pluginId: string;
  runtimeId: string;
  payload: ActivationPayload;
  /** A repeat with the same key and body answers the first activation and records nothing. */
  idempotencyKey?: string;
}

/** An emitted event: every runtime whose `schedule.trigger` is `{ event: topic }` runs with its payload. */
export interface EventEmission {
  tenantId: string;
  sessionId: string;
  topic: string;
  payload: ActivationPayload;
}

const MAX_APPEND_TRIES = 50;

/**
 * Event-triggered and manual activations (spec §2 "Turn context": `<runtime-activation>` with the
 * payload). Each activated runtime runs as its own execution: a `runtime.activated@1` event, then
 * the same turn and runtime jobs as a player input (one execution of the session at a time, in
 * order), with only that runtime, and its activation in the turn context. Being events, the
 * activations are read back by the audit and replay (request-rebuild) like any input.
 */
export class ActivationService {
  constructor(private readonly deps: ActivationServiceDeps) {}

  /**
   * Runs a manual runtime; a runtime the catalog lacks, or whose trigger is not manual, is an
   * `InvalidInputError` naming the field. Under an idempotency key (recorded in the activation's
   * event) a repeat answers the first execution.
   */
  async activateManual(request: ManualActivationRequest): Promise<IdempotentAnswer<{ executionId: string; turnId: string }>> {
    const { tenantId, sessionId, pluginId, runtimeId, payload, idempotencyKey } = request;
    const runtime = this.manualRuntime(await this.sessionCatalog(sessionId), pluginId, runtimeId);
    const idempotency: IdempotencyRecord | undefined =
      idempotencyKey === undefined
        ? undefined
        : { key: idempotencyKey, requestHash: requestHash({ operation: 'activate', sessionId, body: { pluginId, runtimeId, payload } }) };
    for (let tries = 0; ; tries++) {
      if (idempotency) {
        const prior = await this.deps.store.findByIdempotencyKey(tenantId, idempotency.key);
        if (prior) {
          const e = prior.event;
          if (prior.requestHash !== idempotency.requestHash || e.type !== 'runtime.activated@1' || e.streamId !== sessionId)
            throw new IdempotencyKeyMismatchError();
          return { answer: { executionId: e.data.executionId, turnId: e.data.turnId }, replayed: true };
        }
      }
      const { events, started } = activationEvents([{ runtime, kind: 'manual', payload }]);
      try {
        await this.start(request, events, started, idempotency);
        return { answer: { executionId: started[0].executionId, turnId: started[0].turnId }, replayed: false };
      } catch (error) {
        // a concurrent request with the same key won: the next pass answers from its event
        if (!(error instanceof IdempotencyKeyTakenError) || tries >= MAX_APPEND_TRIES) throw error;
      }
    }
  }

  /** Starts one execution per runtime the topic triggers (none: nothing is recorded); resolves to them in catalog order. */
  async emit(emission: EventEmission): Promise<StartedActivation[]> {
    const { events, started } = emittedEventActivations(await this.sessionCatalog(emission.sessionId), emission);
    if (events.length > 0) await this.start(emission, events, started);
    return started;
  }

  /** The catalog as far as the session's plugins go (`session.created@1` `plugins`; an unknown session: the default ones). */
  private async sessionCatalog(sessionId: string): Promise<RuntimeCatalog> {
    return this.deps.catalog().forSession((await readSessionCreated(this.deps, sessionId))?.plugins);
  }

  private manualRuntime(catalog: RuntimeCatalog, pluginId: string, runtimeId: string): CatalogRuntime {
    if (!catalog.plugins.some((p) => p.manifest.id === pluginId)) {
      const loaded = this.deps.catalog().plugins.some((p) => p.manifest.id === pluginId);
      const message = loaded ? `plugin ${JSON.stringify(pluginId)} is not one this session runs` : `unknown plugin ${JSON.stringify(pluginId)}`;
      throw new InvalidInputError([{ path: 'pluginId', message }], 'UNKNOWN_RUNTIME');
    }
    const runtime = catalog.find(pluginId, runtimeId);
    if (!runtime)
      throw new InvalidInputError([{ path: 'runtimeId', message: `plugin ${pluginId} has no runtime ${JSON.stringify(runtimeId)}` }], 'UNKNOWN_RUNTIME');
    const trigger = runtime.manifest.schedule.trigger;
    if (trigger !== 'manual') {
      const what = trigger === 'auto' ? 'auto (it runs in every turn)' : `the event ${JSON.stringify(trigger.event)}`;
      throw new InvalidInputError(
        [{ path: 'runtimeId', message: `runtime ${runtime.fullId} is not manual: its schedule.trigger is ${what}` }],
        'RUNTIME_NOT_MANUAL',
      );
    }
    return runtime;
  }

  private async start(
    session: { tenantId: string; sessionId: string },
    events: NewEvent[],
    started: readonly StartedActivation[],
    idempotency?: IdempotencyRecord,
  ): Promise<void> {
    const { tenantId, sessionId } = session;
    const head = await this.deps.store.streamHead(sessionId);
    if (head.tenantId !== tenantId) throw new SessionNotFoundError(sessionId);
    if (!this.deps.queue.isAvailable()) throw queueUnavailable('the turn queue is unavailable; nothing was recorded, retry later');
    for (let tries = 0; ; tries++) {
      const version = tries === 0 ? head.version : await this.deps.store.streamVersion(sessionId);
      try {
        await this.deps.store.append({ tenantId, streamId: sessionId, expectedVersion: version, events, idempotency });
        break;
      } catch (error) {
        if (!(error instanceof ConcurrencyError) || tries >= MAX_APPEND_TRIES) throw error;
      }
    }
    // as for a player input: enqueued when it is the session's earliest pending execution, else
    // the end of the one before it hands off (SessionService.enqueueSessionHead)
    const earliest = await this.deps.readModels.earliestPendingExecution(tenantId, sessionId);
    if (earliest === null || earliest.executionId === started[0].executionId) {
      try {
        await this.deps.queue.enqueue({ tenantId, sessionId, executionId: started[0].executionId });
      } catch (error) {
        this.deps.logger.warn(`enqueue of execution ${started[0].executionId} failed (${String(error)}); the sweeper will enqueue it`);
      }
    }
  }
}
