import type { CatalogRuntime } from '../catalog/runtime-catalog';
import { agentOf } from '../request/runtime-request';

/** Steps of one runtime's loop when the manifest sets no `agent.loop.maxSteps`. */
export const DEFAULT_MAX_STEPS = 20;
/** Retry hints a runtime with an output schema gets before its output fails it (spec §6 "[retry N]"). */
export const MAX_SCHEMA_RETRIES = 2;

/** How a runtime ends (spec §3 [COMPLETION]). */
export type CompletionForm = 'story' | 'schema' | 'done';

/** The rules of one agent runtime's loop, read from its manifest. */
export interface AgentPolicy {
  completion: CompletionForm;
  /** `output.schema` (a runtime with `completion: 'schema'`). */
  schema?: Record<string, unknown>;
  maxSteps: number;
  /** The loop's deadline from its start in a job; none: no deadline. */
  timeoutMs?: number;
  requireToolUse: boolean;
  maxSchemaRetries: number;
  /** Manifest `finalizer.maxSteps`: calls with tools off after the step limit, asking for the final answer (0: none). */
  finalizerSteps: number;
}

export function agentPolicy(runtime: CatalogRuntime): AgentPolicy {
  const m = runtime.manifest;
  const agent = agentOf(runtime);
  return {
    completion: m.output.schema ? 'schema' : m.outputKind === 'story' ? 'story' : 'done',
    ...(m.output.schema ? { schema: m.output.schema } : {}),
    maxSteps: agent.loop.maxSteps ?? DEFAULT_MAX_STEPS,
    ...(agent.loop.timeoutMs !== undefined ? { timeoutMs: agent.loop.timeoutMs } : {}),
    requireToolUse: agent.requireToolUse,
    maxSchemaRetries: MAX_SCHEMA_RETRIES,
    finalizerSteps: m.finalizer?.maxSteps ?? 0,
  };
}
