import type { Engine, HistoryUse } from '../../libs/engine';
import type { SessionBranchView, SessionSummaryView } from '../../libs/events';
import { type CostedSessionSummary, sessionsWithCosts } from './session-costs';

/** A session as `GET /v1/sessions` and `GET /v1/sessions/:id` answer it: its summary, est. $ and history use. */
export type SessionSummaryAnswer = CostedSessionSummary & {
  /** Uncompacted messages against the engine's limit: `warning` from 80 %, `full` past it (every turn fails), with the code and the fix. */
  history: HistoryUse;
};

/** One session (`GET /v1/sessions/:id`): as the list gives it, with its branches. */
export type SessionDetailAnswer = SessionSummaryAnswer & {
  /** The tenant's branches of the session, newest first, at most `MAX_LISTED_BRANCHES`. */
  branches: SessionBranchView[];
};

/** Most branches a session's view lists (the newest). */
export const MAX_LISTED_BRANCHES = 100;

/** The sessions of a page with their est. $ and history use: one grouped read each, whatever the page's size. */
export async function sessionSummaries(options: {
  engine: Pick<Engine, 'readModels' | 'prices' | 'historyUse' | 'projector'>;
  tenantId: string;
  sessions: readonly SessionSummaryView[];
}): Promise<SessionSummaryAnswer[]> {
  const { engine, tenantId, sessions } = options;
  const [costed, history] = await Promise.all([
    sessionsWithCosts({ tenantId, sessions, readModels: engine.readModels, quarantine: engine.projector.quarantine, prices: engine.prices }),
    engine.historyUse.of(tenantId, sessions),
  ]);
  return costed.map((s) => ({ ...s, history: history.get(s.sessionId)! }));
}
