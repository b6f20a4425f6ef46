import type { Activation, ContextMessage, InputSlot } from '../../context';
import type { ExecutionJournal, ExecutionSuspension } from '../journal/journal';
import type { CatalogRuntime, RuntimeCatalog } from '../catalog/runtime-catalog';
import { resolveInputSlots } from './resolve-input-slots';

/**
 * What a runtime's request takes from its execution besides the history: the typed inputs of its
 * `io.inputs`, and the activation of an execution that an event or the player started. Derived
 * from the journal alone, so the worker and a rebuild from the events get the same.
 */
export function executionRequestInputs(
  catalog: RuntimeCatalog,
  runtime: CatalogRuntime,
  execution: ExecutionJournal,
): { inputs: InputSlot[]; activation?: Activation; resume?: { currentTurnUserMessages: ContextMessage[] } } {
  // a runtime resumed after a suspension keeps its continuation (spec §1, §3): the frozen input
  // slots and protected range, never resolved again
  const continuation = runtimeContinuation(execution, runtime);
  const inputs = continuation
    ? continuation.inputs.map((i) => structuredClone(i))
    : resolveInputSlots({ catalog, runtime, outputs: execution.outputs.values() });
  const resume = continuation ? { resume: { currentTurnUserMessages: continuation.currentTurnUserMessages.map((m) => ({ ...m })) } } : {};
  const a = execution.activation;
  if (!a) return { inputs, ...resume };
  return { inputs, ...resume, activation: a.kind === 'event' ? { kind: 'event', topic: a.topic, payload: a.payload } : { kind: 'manual', payload: a.payload } };
}

/**
 * The continuation a runtime runs on: its latest suspension in the execution (as the journal
 * stands: a rebuild of a call before the suspension sees none), or none.
 */
export function runtimeContinuation(execution: ExecutionJournal, runtime: Pick<CatalogRuntime, 'pluginId' | 'runtimeId'>): ExecutionSuspension | undefined {
  const own = execution.suspensions.filter((s) => s.pluginId === runtime.pluginId && s.runtimeId === runtime.runtimeId);
  return own[own.length - 1];
}

/**
 * `ctx.inputs` of a function runtime (PLUGIN-API.md): each binding's resolved value — the value of
 * a `cardinality: one` slot, the items of a `many` one — as the source produced it (no data
 * boundary: the function is code, not a model).
 */
export function functionInputs(catalog: RuntimeCatalog, runtime: CatalogRuntime, execution: ExecutionJournal): Readonly<Record<string, unknown>> {
  const slots = resolveInputSlots({ catalog, runtime, outputs: execution.outputs.values() });
  return Object.freeze(Object.fromEntries(slots.map((s) => [s.binding, s.cardinality === 'one' ? s.value : (s.items ?? [])])));
}
