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
