import type { ReadModels } from '../../events';
import type { RuntimeCatalog } from '../catalog';
import { type HistoryUse, historyUse } from '../history';

/** True when a session's view of the catalog has a `history.compact@2` provider (the barrier's test). */
export function hasCompactionProvider(catalog: RuntimeCatalog): boolean {
  return catalog.host.registry.providers('history.compact@2').length > 0;
}

/** A session as its history use is computed from: its id and its plugin list (null: the plugins enabled by default). */
export interface SessionPluginList {
  sessionId: string;
  plugins: readonly string[] | null;
}

/**
 * Each session's history use (`GET /v1/sessions`, `GET /v1/sessions/:id`, the inspector): its
 * uncompacted messages (one statement for a page of sessions, no row read) against the engine's
 * limit, and whether its plugins compact (the current catalog's view for its plugin list).
 */
export class SessionHistoryUse {
  constructor(private readonly deps: { readModels: Pick<ReadModels, 'uncompactedCounts'>; catalog: () => RuntimeCatalog; limit: number }) {}

  /** The engine's bound of uncompacted messages (`COVEL_HISTORY_MESSAGE_LIMIT`). */
  get limit(): number {
    return this.deps.limit;
  }

  async of(tenantId: string, sessions: readonly SessionPluginList[]): Promise<Map<string, HistoryUse>> {
    const counts = await this.deps.readModels.uncompactedCounts(
      tenantId,
      sessions.map((s) => s.sessionId),
    );
    const catalog = this.deps.catalog();
    return new Map(
      sessions.map((s) => [
        s.sessionId,
        historyUse({ messages: counts.get(s.sessionId) ?? 0, limit: this.deps.limit, compaction: hasCompactionProvider(catalog.forSession(s.plugins)) }),
      ]),
    );
  }
}
