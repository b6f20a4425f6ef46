import { EngineError } from '../../errors';

/**
 * An `io.inputs` binding cannot be given its value: a `cardinality: one` binding no earlier result
 * of this execution satisfies, a `select` pointer that finds nothing, several results for `one`, or
 * a structured output that is not JSON. Retrying the runtime reads the same outputs: permanent.
 */
export class InputBindingError extends EngineError {
  readonly code = 'RUNTIME_INPUT_UNRESOLVED';
  readonly category = 'invalid';
  constructor(options: { pluginId: string; runtimeId: string; binding: string; reason: string }) {
    super(`plugin ${options.pluginId}: runtime ${options.runtimeId}: io.inputs.${options.binding}: ${options.reason}`);
  }
}
