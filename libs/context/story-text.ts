import type { ExecutionOutput, InputSlot, RuntimeView } from './types';

/**
 * Spec §1 "This turn's story text": story output of runtimes of earlier stages of this execution.
 * Never the same stage (no barrier between them); a runtime with no stage comes after all stages.
 * Every output is this execution's own: a retried turn runs every runtime again (the engine
 * carries no seeds in from the turn it re-runs, whose text its history leaves out).
 */
export function thisTurnStoryText(outputs: readonly ExecutionOutput[], runtime: RuntimeView): ExecutionOutput[] {
  return outputs.filter((o) => o.outputKind === 'story' && o.text.trim() !== '' && ranBefore(o, runtime));
}

function ranBefore(output: ExecutionOutput, runtime: RuntimeView): boolean {
  if (output.stageIndex === null) return false;
  return runtime.stageIndex === null || output.stageIndex < runtime.stageIndex;
}

/**
 * The story text is sent once: a `cardinality: one` input whose value is entirely a projected
 * story text becomes one pointer sentence in <runtime-inputs> (source kept). A value that only
 * contains it is left alone, and so is every input when nothing was projected.
 */
export function pointStoryInputs(inputs: readonly InputSlot[], projected: readonly ExecutionOutput[], pointer: string): InputSlot[] {
  const texts = new Set(projected.map((o) => o.text));
  return inputs.map((slot) => (slot.cardinality === 'one' && typeof slot.value === 'string' && texts.has(slot.value) ? { ...slot, value: pointer } : slot));
}
