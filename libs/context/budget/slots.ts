import type { BudgetMessage, BudgetMessageKind } from './types';

/** One message of the request being budgeted, with its kind and its estimated tokens. */
export interface Slot<M extends BudgetMessage> {
  message: M;
  kind: BudgetMessageKind;
  tokens: number;
}

export function slotTokens(slots: readonly Slot<BudgetMessage>[]): number {
  return slots.reduce((n, s) => n + s.tokens, 0);
}

/**
 * A message the budget writes itself (a frozen digest, the trim marker): a plain system message.
 * The caller's message type only adds optional members to `BudgetMessage`, so the plain shape is one of its values.
 */
export function budgetSystemMessage<M extends BudgetMessage>(content: string): M {
  const message: BudgetMessage = { role: 'system', content };
  return message as M;
}
