import type { ContextMessage, MessageSectionName } from './types';

export interface PlacedMessage {
  message: ContextMessage;
  section: MessageSectionName;
}

/**
 * Spec §2: `{ depth: n }` messages go before the last n conversation messages (0: after the last).
 * Depths count the conversation as given (the turn context is not in it: it takes no position).
 */
export function insertAtDepth(conversation: readonly PlacedMessage[], items: readonly { depth: number; message: ContextMessage }[]): PlacedMessage[] {
  const before = new Map<number, PlacedMessage[]>();
  for (const item of items) {
    const index = conversation.length - Math.min(Math.max(0, Math.floor(item.depth)), conversation.length);
    const list = before.get(index) ?? [];
    list.push({ message: item.message, section: 'depth' });
    before.set(index, list);
  }
  const out: PlacedMessage[] = [];
  for (let i = 0; i <= conversation.length; i++) {
    out.push(...(before.get(i) ?? []));
    if (i < conversation.length) out.push(conversation[i]);
  }
  return out;
}
