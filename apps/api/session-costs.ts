import type { ReadModels, SessionSummaryView } from '../../libs/events';
import type { PriceTable } from '../../libs/providers';
import { type CallUsage, usageCost } from '../../libs/reports';

export type CostedSessionSummary = SessionSummaryView & {
  /** Est. USD of the session's answered model calls at list prices; null when one of its models has no price. */
  estCostUsd: number | null;
};

/** The sessions of a page with their est. $: one grouped read of their calls' usage per model, whatever the page's size. */
export async function sessionsWithCosts(options: {
  tenantId: string;
  sessions: readonly SessionSummaryView[];
  readModels: Pick<ReadModels, 'sessionModelUsage'>;
  prices: PriceTable;
}): Promise<CostedSessionSummary[]> {
  const { tenantId, sessions, readModels, prices } = options;
  const usage = await readModels.sessionModelUsage(
    tenantId,
    sessions.map((s) => s.sessionId),
  );
  const bySession = new Map<string, CallUsage[]>();
  for (const u of usage) {
    const used = bySession.get(u.sessionId) ?? [];
    // a row without a model cannot be priced: '' has no price, so the session's figure is null
    used.push({ model: u.model ?? '', usage: u });
    bySession.set(u.sessionId, used);
  }
  return sessions.map((s) => ({ ...s, estCostUsd: usageCost(bySession.get(s.sessionId) ?? [], prices) }));
}
