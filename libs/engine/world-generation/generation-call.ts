import type { ModelCall, SlotBinding } from '../../providers';
import { GENERATED_WORLD_JSON_SCHEMA, GENERATED_WORLD_SCHEMA_NAME } from './generated-world';
import type { PlannedCall } from './generation-plan';

/**
 * The model call of a planned world generation call (pure: the worker sends its wire body, an
 * audit derives the same body again): the planned messages, without streaming, the job's output
 * limit, the world's JSON schema as structured output for a draft (the adapters of protocols that
 * have none leave it out: the template describes the shape), and what `llm.toml` sets on the slot's
 * requests (`reasoning`; no tools).
 */
export function generationModelCall(call: PlannedCall, binding: Pick<SlotBinding, 'slot' | 'overrides'>, maxOutputTokens: number): ModelCall {
  const { slot, overrides } = binding;
  return {
    model: slot.model,
    messages: call.messages.map((m) => ({ role: m.role, content: m.content })),
    ...(call.structured ? { outputSchema: { name: GENERATED_WORLD_SCHEMA_NAME, schema: GENERATED_WORLD_JSON_SCHEMA } } : {}),
    maxOutputTokens,
    stream: false,
    ...(overrides.reasoning ? { overrides: { reasoning: overrides.reasoning } } : {}),
    cacheBoundaries: slot.cacheBoundaries,
  };
}
