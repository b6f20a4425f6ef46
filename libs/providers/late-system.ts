import { stripCacheBreaks } from './cache-break';
import type { ChatMessage } from './types';

/** How a system message after the conversation started is sent as user content (spec §2). */
export function wrapSystemInstruction(text: string): string {
  return `<system-instruction>\n${stripCacheBreaks(text)}\n</system-instruction>`;
}

/** Leading system messages (before any other role) and the rest, in order. */
export function splitLeadingSystem(messages: readonly ChatMessage[]): { leading: ChatMessage[]; rest: ChatMessage[] } {
  const first = messages.findIndex((m) => m.role !== 'system');
  const cut = first === -1 ? messages.length : first;
  return { leading: messages.slice(0, cut), rest: messages.slice(cut) };
}
