import type { CatalogRuntime } from '../catalog/runtime-catalog';
import { NO_ARGUMENTS, type Tool } from './tool';
import { toolError, toolSuccess } from './tool-result';
import { RUNTIME_DONE } from '../catalog/framework-tools';

/** Spec §3 [COMPLETION]: a runtime with an output schema ends with its JSON (or its completion tool), never with runtime-done. */
export function runtimeDoneAllowed(runtime: CatalogRuntime): boolean {
  return runtime.manifest.output.schema === undefined;
}

/**
 * Whether the runtime gets `runtime-done` in its definitions: every agent runtime without an output
 * schema that is not a story runtime (the preamble tells those to call it), and a story runtime
 * without an output schema that declares it in `agent.tools`.
 */
export function runtimeDoneDefined(runtime: CatalogRuntime): boolean {
  if (!runtimeDoneAllowed(runtime)) return false;
  return runtime.manifest.outputKind !== 'story' || (runtime.manifest.agent?.tools.includes(RUNTIME_DONE) ?? false);
}

export const runtimeDoneTool: Tool = {
  definition: {
    name: RUNTIME_DONE,
    description: 'Call this when your work for this turn is done. The runtime ends; no further model call is made.',
    parameters: { ...NO_ARGUMENTS },
  },
  async run(_args, context) {
    if (!runtimeDoneAllowed(context.runtime))
      return toolError(
        'RUNTIME_DONE_NOT_ALLOWED',
        'runtime-done is not available to a runtime with an output schema: end by replying with JSON that matches the output schema.',
      );
    return toolSuccess({ done: true }, { done: true });
  },
};
