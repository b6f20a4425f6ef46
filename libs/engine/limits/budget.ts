import type { TenantLimits } from '../../events';
import { BudgetExhaustedError } from './errors';

/** What the usage projection answers for a tenant over a range of time (issue 32 item 3). */
export interface UsageTotals {
  calls: number;
  inputTokens: number;
  cachedInputTokens: number;
  outputTokens: number;
  estCostUsd: number;
}

/** The usage reader the budget reads (`engine.usage` of the usage projection). */
export interface UsageTotalsReader {
  totals(query: { tenantId: string; from: Date; to: Date }): Promise<UsageTotals>;
}

export type BudgetPeriod = NonNullable<TenantLimits['budget']>['period'];

/** The period `at` is in: a UTC day, or a calendar month in UTC; `to` is exclusive (the reset time). */
export function budgetPeriod(period: BudgetPeriod, at: Date): { from: Date; to: Date } {
  const y = at.getUTCFullYear();
  const m = at.getUTCMonth();
  if (period === 'month') return { from: new Date(Date.UTC(y, m, 1)), to: new Date(Date.UTC(y, m + 1, 1)) };
  const d = at.getUTCDate();
  return { from: new Date(Date.UTC(y, m, d)), to: new Date(Date.UTC(y, m, d + 1)) };
}

/**
 * Throws `BudgetExhaustedError` when the tenant's spend in the current period has reached its
 * budget: tokens (input + output) at `maxTokens`, or the estimated cost at `maxUsd`. No budget: nothing read.
 */
export async function checkBudget(options: { tenantId: string; budget: TenantLimits['budget']; usage: UsageTotalsReader; now?: Date }): Promise<void> {
  const { budget } = options;
  if (!budget || (budget.maxTokens === undefined && budget.maxUsd === undefined)) return;
  const { from, to } = budgetPeriod(budget.period, options.now ?? new Date());
  // the period's last moment: a reader counting whole UTC days (both ends included) reads the period's days only
  const totals = await options.usage.totals({ tenantId: options.tenantId, from, to: new Date(to.getTime() - 1) });
  const tokens = totals.inputTokens + totals.outputTokens;
  const resetsAt = to.toISOString();
  if (budget.maxTokens !== undefined && tokens >= budget.maxTokens)
    throw new BudgetExhaustedError({ period: budget.period, resetsAt, exhausted: 'maxTokens', limit: budget.maxTokens, used: tokens });
  if (budget.maxUsd !== undefined && totals.estCostUsd >= budget.maxUsd)
    throw new BudgetExhaustedError({ period: budget.period, resetsAt, exhausted: 'maxUsd', limit: budget.maxUsd, used: totals.estCostUsd });
}
