import type { ChatMessage, ModelResponse, ToolCall } from '../../providers';

/**
 * A step's reply as recorded (`llm.responded@1` reply, JSON text): the text, the tool calls, and
 * every other field the adapter returned beside `finishReason` and `usage` (reasoning, provider
 * continuations), carried back unchanged on the assistant message of the next step.
 */
export interface StepReply {
  text: string;
  toolCalls: ToolCall[];
  [carried: string]: unknown;
}

/** The reply to record from a model response (JSON text: jsonb would reorder the arguments' keys). */
export function recordReply(response: ModelResponse): string {
  const { finishReason: _finishReason, usage: _usage, ...reply } = response;
  return JSON.stringify(reply);
}

export function parseReply(recorded: string): StepReply {
  const reply = JSON.parse(recorded) as Partial<StepReply>;
  return { ...reply, text: typeof reply.text === 'string' ? reply.text : '', toolCalls: Array.isArray(reply.toolCalls) ? reply.toolCalls : [] };
}

/** The assistant message a reply becomes in the next step's request: its tool calls and carried fields kept as returned. */
export function assistantMessage(reply: StepReply): ChatMessage {
  const { text, toolCalls, ...carried } = reply;
  return { ...(carried as Partial<ChatMessage>), role: 'assistant', content: text, ...(toolCalls.length > 0 ? { toolCalls } : {}) };
}
