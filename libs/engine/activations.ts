import { randomUUID } from 'node:crypto';
import { ConcurrencyError, type EventData, type EventStore, type NewEvent, type ReadModels } from '../events';
import { InvalidInputError } from '../errors';
import { SessionNotFoundError } from './errors';
import type { Logger } from './logger';
import { queueUnavailable, type TurnProducer } from './queue';
import type { CatalogRuntime, RuntimeCatalog } from './runtime-catalog';

/** An activation's payload: any JSON value (the API checks it with zod). */
export type ActivationPayload = EventData<'runtime.activated@1'>['payload'];

export interface ActivationServiceDeps {
  store: EventStore;
  queue: TurnProducer;
  readModels: ReadModels;
  catalog: RuntimeCatalog;
  logger: Logger;
}

/** A player's request to run a `schedule.trigger: manual` runtime (`POST /v1/sessions/:id/activations`). */
export interface ManualActivationRequest {
  tenantId: string;
  sessionId: string;
  pluginId: string;
  runtimeId: string;
  payload: ActivationPayload;
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

  /** Runs a manual runtime; a runtime the catalog lacks, or whose trigger is not manual, is an `InvalidInputError` naming the field. */
  async activateManual(request: ManualActivationRequest): Promise<{ executionId: string; turnId: string }> {
    const runtime = this.manualRuntime(request.pluginId, request.runtimeId);
    const [started] = await this.start(request, [{ runtime, kind: 'manual', payload: request.payload }]);
    return started;
  }

  /** Starts one execution per runtime the topic triggers (none: nothing is recorded); resolves to them in catalog order. */
  async emit(emission: EventEmission): Promise<{ executionId: string; turnId: string; pluginId: string; runtimeId: string }[]> {
    const followers = this.deps.catalog.all().filter((r) => {
      const trigger = r.manifest.schedule.trigger;
      return typeof trigger === 'object' && trigger.event === emission.topic;
    });
    if (followers.length === 0) return [];
    const started = await this.start(
      emission,
      followers.map((runtime) => ({ runtime, kind: 'event' as const, topic: emission.topic, payload: emission.payload })),
    );
    return started.map((s, i) => ({ ...s, pluginId: followers[i].pluginId, runtimeId: followers[i].runtimeId }));
  }

  private manualRuntime(pluginId: string, runtimeId: string): CatalogRuntime {
    if (!this.deps.catalog.plugins.some((p) => p.manifest.id === pluginId)) {
      throw new InvalidInputError([{ path: 'pluginId', message: `unknown plugin ${JSON.stringify(pluginId)}` }], 'UNKNOWN_RUNTIME');
    }
    const runtime = this.deps.catalog.find(pluginId, runtimeId);
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
    activations: { runtime: CatalogRuntime; kind: 'manual' | 'event'; topic?: string; payload: ActivationPayload }[],
  ): Promise<{ executionId: string; turnId: string }[]> {
    const { tenantId, sessionId } = session;
    const head = await this.deps.store.streamHead(sessionId);
    if (head.tenantId !== tenantId) throw new SessionNotFoundError(sessionId);
    if (!this.deps.queue.isAvailable()) throw queueUnavailable('the turn queue is unavailable; nothing was recorded, retry later');
    const started = activations.map(() => ({ executionId: randomUUID(), turnId: randomUUID() }));
    const events: NewEvent[] = activations.map((a, i) => ({
      type: 'runtime.activated@1',
      data: {
        ...started[i],
        messageId: randomUUID(),
        kind: a.kind,
        pluginId: a.runtime.pluginId,
        runtimeId: a.runtime.runtimeId,
        ...(a.topic !== undefined ? { topic: a.topic } : {}),
        payload: a.payload,
      },
    }));
    for (let tries = 0; ; tries++) {
      const version = tries === 0 ? head.version : await this.deps.store.streamVersion(sessionId);
      try {
        await this.deps.store.append({ tenantId, streamId: sessionId, expectedVersion: version, events });
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
    return started;
  }
}
