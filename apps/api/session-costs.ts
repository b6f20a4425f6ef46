import type { QuarantineRecords, ReadModels, SessionSummaryView } from '../../libs/events';
import type { PriceTable } from '../../libs/providers';
import { type CallUsage, usageCost } from '../../libs/reports';

export type CostedSessionSummary = SessionSummaryView & {
  /**
   * Est. USD of the session's answered model calls at list prices; null when one of its models has
   * no price, or when `costQuarantined`.
   */
  estCostUsd: number | null;
  /**
   * The `prefix_reports` projection the figure is read from skipped (quarantined) an event of the
   * session, not applied since: the figure would be too low, so `estCostUsd` is null.
   */
  costQuarantined: boolean;
};

/** The projection the costs are read from. */
const COSTS_PROJECTION = 'prefix_reports';

/**
 * The sessions of a page with their est. $: one grouped read of their calls' usage per model, and one
 * read of the page's sessions with a quarantined event in that projection, whatever the page's size.
 */
export async function sessionsWithCosts(options: {
  tenantId: string;
  sessions: readonly SessionSummaryView[];
  readModels: Pick<ReadModels, 'sessionModelUsage'>;
  quarantine: Pick<QuarantineRecords, 'streamsWithUnresolved'>;
  prices: PriceTable;
}): Promise<CostedSessionSummary[]> {
  const { tenantId, sessions, readModels, quarantine, prices } = options;
  const sessionIds = sessions.map((s) => s.sessionId);
  const [usage, quarantined] = await Promise.all([
    readModels.sessionModelUsage(tenantId, sessionIds),
    quarantine.streamsWithUnresolved({ tenantId, projection: COSTS_PROJECTION, streamIds: sessionIds }),
  ]);
  const bySession = new Map<string, CallUsage[]>();
  for (const u of usage) {
    const used = bySession.get(u.sessionId) ?? [];
    // a row without a model cannot be priced: '' has no price, so the session's figure is null
    used.push({ model: u.model ?? '', usage: u });
    bySession.set(u.sessionId, used);
  }
  return sessions.map((s) =>
    quarantined.has(s.sessionId)
      ? { ...s, estCostUsd: null, costQuarantined: true }
      : { ...s, estCostUsd: usageCost(bySession.get(s.sessionId) ?? [], prices), costQuarantined: false },
  );
}
