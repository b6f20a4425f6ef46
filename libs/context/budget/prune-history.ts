import { fixedText } from '../fixed-text';
import type { Locale } from '../../plugins-sdk';
import { estimateMessage } from './estimate-request';
import { budgetSystemMessage, slotTokens, type Slot } from './slots';
import type { BudgetMessage, Estimator } from './types';

export interface PruneInput<M extends BudgetMessage> {
  slots: readonly Slot<M>[];
  /** Tokens of the request besides its messages (tool definitions, response schema). */
  fixed: number;
  /** Prune until the estimate is at most this (the 70 % stop). */
  target: number;
  estimator: Estimator;
  locale: Locale;
}

/**
 * History pruning (spec §5, after the tool-group steps): drops `history` messages oldest first
 * until the estimate is at most `target`, so later turns have room and do not trim again. Never
 * drops a `protected`, `summary`, `system-prompt`, `loop` or `other` message, nor the system
 * message right before the protected turn (the turn context), and never splits an assistant
 * message's tool calls from their results (they go together, or not at all). Where the pruned
 * messages were (at the first one), ONE system message with the localized trim marker is
 * inserted, kind `history`; it has no count, so it reads the same however much was pruned.
 */
export function pruneHistory<M extends BudgetMessage>(input: PruneInput<M>): { slots: Slot<M>[]; pruned: number } {
  const { slots, fixed, target } = input;
  let total = fixed + slotTokens(slots);
  if (total <= target) return { slots: [...slots], pruned: 0 };
  const firstProtected = slots.findIndex((s) => s.kind === 'protected');
  const turnContext = firstProtected > 0 && slots[firstProtected - 1]!.message.role === 'system' ? firstProtected - 1 : -1;
  const marker = budgetSystemMessage<M>(fixedText(input.locale).budgetTrimmed);
  const markerTokens = estimateMessage(marker, input.estimator);
  const removed = new Set<number>();
  for (const unit of pruneUnits(slots)) {
    if (total <= target) break;
    if (!unit.every((i) => slots[i]!.kind === 'history' && i !== turnContext)) continue;
    if (removed.size === 0) total += markerTokens;
    for (const i of unit) {
      removed.add(i);
      total -= slots[i]!.tokens;
    }
  }
  if (removed.size === 0) return { slots: [...slots], pruned: 0 };
  const first = Math.min(...removed);
  const out: Slot<M>[] = [];
  slots.forEach((slot, i) => {
    if (i === first) out.push({ message: marker, kind: 'history', tokens: markerTokens });
    if (!removed.has(i)) out.push(slot);
  });
  return { slots: out, pruned: removed.size };
}

/** The messages that are dropped together: an assistant message with the tool results that follow it, or one message. */
function pruneUnits(slots: readonly Slot<BudgetMessage>[]): number[][] {
  const units: number[][] = [];
  for (let i = 0; i < slots.length;) {
    const calls = slots[i]!.message.toolCalls ?? [];
    const unit = [i++];
    if (calls.length > 0) {
      const ids = new Set(calls.map((c) => c.id));
      while (i < slots.length && slots[i]!.message.role === 'tool' && ids.has(slots[i]!.message.toolCallId ?? '')) unit.push(i++);
    }
    units.push(unit);
  }
  return units;
}
