import type { Locale } from '../../plugins-sdk';
import type { ChatMessage } from '../../providers';

/**
 * The finalizer's request for the final answer (spec §5, manifest `finalizer.maxSteps`): sent with
 * tools off after the step limit, and once in emergency mode when a step's request overflows.
 * Fixed per locale (the prompt prefix stays stable).
 */
const FINALIZER_PROMPT: Record<Locale, string> = {
  en: 'No more tool calls are possible. Using only what you already have, give your final answer now.',
  'zh-Hans': '已经不能再调用工具了。只用你已有的信息，现在给出你的最终回答。',
};

export function finalizerPrompt(locale: Locale): ChatMessage {
  return { role: 'user', content: FINALIZER_PROMPT[locale] };
}

/** A request's conversation holds at least one complete tool group: an assistant message with tool calls followed by their results. */
export function hasCompleteToolGroup(conversation: readonly ChatMessage[]): boolean {
  for (let i = 0; i < conversation.length; i++) {
    const calls = conversation[i].toolCalls ?? [];
    if (conversation[i].role !== 'assistant' || calls.length === 0) continue;
    const results = new Set(conversation.slice(i + 1, i + 1 + calls.length).map((m) => (m.role === 'tool' ? m.toolCallId : undefined)));
    if (calls.every((c) => results.has(c.id))) return true;
  }
  return false;
}
