import type { Activation, InputSlot } from '../../context';
import type { ExecutionJournal } from '../journal';
import type { CatalogRuntime, RuntimeCatalog } from '../runtime-catalog';
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
): { inputs: InputSlot[]; activation?: Activation } {
  const inputs = resolveInputSlots({ catalog, runtime, outputs: execution.outputs.values() });
  const a = execution.activation;
  if (!a) return { inputs };
  return { inputs, activation: a.kind === 'event' ? { kind: 'event', topic: a.topic, payload: a.payload } : { kind: 'manual', payload: a.payload } };
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
