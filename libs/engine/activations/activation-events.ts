import { randomUUID } from 'node:crypto';
import type { NewEvent } from '../../events';
import type { CatalogRuntime, RuntimeCatalog } from '../catalog/runtime-catalog';
import type { ActivationPayload } from '../plugin-host/event-emissions';

/** An activation's payload: any JSON value (the API checks it with zod; plugin-host/ checks an emitted one). */
export type { ActivationPayload };

/** One execution an activation starts. */
export interface StartedActivation {
  executionId: string;
  turnId: string;
  pluginId: string;
  runtimeId: string;
}

/** The runtimes whose `schedule.trigger` is `{ event: topic }`, in catalog order. */
export function eventFollowers(catalog: RuntimeCatalog, topic: string): CatalogRuntime[] {
  return catalog.all().filter((r) => {
    const trigger = r.manifest.schedule.trigger;
    return typeof trigger === 'object' && trigger.event === topic;
  });
}

/**
 * The `runtime.activated@1` events that start one execution per runtime, with their ids. Pure:
 * a caller appends them in its own append — the API on its own, a worker (an emitting function
 * runtime or tool) in the same fenced append as the result that emitted them, so a retried attempt
 * cannot emit twice. Once appended they are pending executions of the session: the end of the
 * running execution hands off to them (`handOff`), in order.
 */
export function activationEvents(activations: readonly { runtime: CatalogRuntime; kind: 'manual' | 'event'; topic?: string; payload: ActivationPayload }[]): {
  events: NewEvent[];
  started: StartedActivation[];
} {
  const started = activations.map((a) => ({ executionId: randomUUID(), turnId: randomUUID(), pluginId: a.runtime.pluginId, runtimeId: a.runtime.runtimeId }));
  const events: NewEvent[] = activations.map((a, i) => ({
    type: 'runtime.activated@1',
    data: {
      executionId: started[i].executionId,
      turnId: started[i].turnId,
      messageId: randomUUID(),
      kind: a.kind,
      pluginId: a.runtime.pluginId,
      runtimeId: a.runtime.runtimeId,
      ...(a.topic !== undefined ? { topic: a.topic } : {}),
      payload: a.payload,
    },
  }));
  return { events, started };
}

/** The events of an emitted event: one activation per runtime its topic triggers (none: no event). */
export function emittedEventActivations(catalog: RuntimeCatalog, emission: { topic: string; payload: ActivationPayload }) {
  return activationEvents(eventFollowers(catalog, emission.topic).map((runtime) => ({ runtime, kind: 'event' as const, ...emission })));
}
