import type { StoredEvent } from '../events';
import { estimateCostUsd, type PriceTable, sumCostUsd, type TokenUsage } from '../providers';
import type { CallInspectionView, SessionTurnView } from './turn-inspection';

/**
 * The est. $ of the inspector's views, from the provider's usage as `llm.responded@1` recorded it
 * and the model of its `llm.calling@1`, at the list prices in force (`PriceTable`). Kept apart from
 * the views themselves (pure, one pass over the events the views read anyway).
 *
 * - a call: its usage at its model's price; null when it has no answer yet or its model no price;
 * - a turn or a session: the sum over its answered calls; null when one of them has no price.
 */

export interface CallCost {
  /** This call's estimated USD (null: no answer, or a model without a price). */
  estCostUsd: number | null;
  /** The turn's: the sum over its answered calls (null: one of them has no price), the same on each call of the answer. */
  turnEstCostUsd: number | null;
}

export type CostedCallView = CallInspectionView & CallCost;
export type CostedTurnView = SessionTurnView & { estCostUsd: number | null };

/** Per call usage and model, for the sums of a session's or a turn's usage. */
export interface CallUsage {
  model: string;
  usage: TokenUsage;
}

/** The calls of one turn with their cost and the turn's total. */
export function withCallCosts(calls: readonly CallInspectionView[], prices: PriceTable): CostedCallView[] {
  const costs = calls.map((c) => (c.usage ? estimateCostUsd(c.usage, prices.priceOf(c.model)) : null));
  const turnEstCostUsd = sumCostUsd(costs.filter((_, i) => calls[i].usage !== null));
  return calls.map((c, i) => ({ ...c, estCostUsd: costs[i], turnEstCostUsd }));
}

/** Each turn of the list with the sum over its answered calls. */
export function withTurnCosts(turns: readonly SessionTurnView[], events: readonly StoredEvent[], prices: PriceTable): CostedTurnView[] {
  const costs = turnCosts(events, prices);
  // a turn without an answered call cost nothing; a null (an unpriced model) stays null
  return turns.map((t) => ({ ...t, estCostUsd: costs.has(t.turnId) ? costs.get(t.turnId)! : 0 }));
}

/** turnId → the sum over its answered calls (the last answer of a call counts, as in the calls view). */
export function turnCosts(events: readonly StoredEvent[], prices: PriceTable): Map<string, number | null> {
  const calls = new Map<string, { turnId: string; model: string; usage: TokenUsage | null }>();
  for (const e of events) {
    if (e.type === 'llm.calling@1') calls.set(e.data.callId, { turnId: e.data.turnId, model: e.data.model, usage: null });
    else if (e.type === 'llm.responded@1') {
      const call = calls.get(e.data.callId);
      if (call) call.usage = e.data.usage;
    }
  }
  const byTurn = new Map<string, CallUsage[]>();
  for (const c of calls.values()) {
    if (!c.usage) continue;
    const used = byTurn.get(c.turnId) ?? [];
    used.push({ model: c.model, usage: c.usage });
    byTurn.set(c.turnId, used);
  }
  return new Map([...byTurn].map(([turnId, used]) => [turnId, usageCost(used, prices)]));
}

/** The sum of several calls' (or per-model sums of calls') estimated USD; null when one model has no price. */
export function usageCost(used: Iterable<CallUsage>, prices: PriceTable): number | null {
  return sumCostUsd([...used].map((u) => estimateCostUsd(u.usage, prices.priceOf(u.model))));
}
