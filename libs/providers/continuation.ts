import { z } from 'zod';

const Json = z.record(z.string(), z.unknown());

/**
 * What a protocol needs back, unchanged, on the next request of the same tool loop: the reply's
 * reasoning state. Opaque to the engine, JSON-serializable (it is recorded in events and the next
 * request is rebuilt from the log), tagged with the protocol that produced it; an adapter of
 * another protocol ignores it.
 * - `anthropic`: the reply's `thinking` / `redacted_thinking` blocks, verbatim and in order (sent
 *   back first in the same assistant turn, before its text and tool_use blocks);
 * - `openai-responses`: the reply's `reasoning` output items, verbatim (id, summary,
 *   encrypted_content), sent back as input items before the turn's message and function_call items;
 * - `gemini`: the reply's model content parts, verbatim (with their `thoughtSignature`s; streamed
 *   text merged into one part per run), sent back as the model turn's parts;
 * - `openai-chat`: `reasoning_content` (DeepSeek, Qwen), sent back on the assistant message.
 */
export const Continuation = z.discriminatedUnion('protocol', [
  z.object({ protocol: z.literal('anthropic'), blocks: z.array(Json) }),
  z.object({ protocol: z.literal('openai-responses'), items: z.array(Json) }),
  z.object({ protocol: z.literal('gemini'), parts: z.array(Json) }),
  z.object({ protocol: z.literal('openai-chat'), reasoningContent: z.string() }),
]);
export type Continuation = z.infer<typeof Continuation>;

/** The continuation when it belongs to this protocol; another protocol's is not sent. */
export function continuationFor<P extends Continuation['protocol']>(
  c: Continuation | undefined,
  protocol: P,
): Extract<Continuation, { protocol: P }> | undefined {
  return c?.protocol === protocol ? (c as Extract<Continuation, { protocol: P }>) : undefined;
}
