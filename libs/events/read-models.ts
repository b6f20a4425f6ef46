import { type Kysely, type RawBuilder, type Selectable, sql } from 'kysely';
import { readUncompactedPrefix } from './projections/turn-messages';
import { precompiled } from './precompiled';
import type { Database, TurnMessagesTable } from './schema';
import { type EventData, ExecutionCancelledV1, type MediaReference, WaitingFor } from './event-types';
import { readLatestTurn, readTurnAlternatives, type TurnAlternativesRecord } from './turn-alternatives';
import { type BranchOriginView, readBranchOrigins, readHistoryHasTurn, readSessionBranches, type SessionBranchView } from './session-branches';
import { readLiveStreamStart } from './live-stream-start';
import { type HistoryMessageRecord, readHistoryMessage, readPlayerInput, readRevertScope, type RevertScope } from './steering-reads';

/** Statistics for all of a session's committed messages (spec §1 step 1). */
export interface HistoryStats {
  total: number;
  compacted: number;
  uncompacted: number;
  /** Committed turns with at least one message. */
  turns: number;
}

export interface ExecutionView {
  executionId: string;
  sessionId: string;
  turnId: string;
  /**
   * `waiting`: a runtime suspended on a tool; `waitingFor` says for what (`POST /v1/executions/:id/resume`).
   * `cancelled`: stopped by `POST /v1/executions/:id/cancel` (ended, without its commit).
   */
  status: 'queued' | 'running' | 'waiting' | 'committed' | 'failed' | 'cancelled';
  attempts: number;
  workerId: string | null;
  error: { code: string; message: string } | null;
  submittedAt: string;
  updatedAt: string;
  waitingFor?: EventData<'execution.suspended@1'>['waitingFor'];
}

/** An `executions` row as the API answers it (a read's, or the row an execution's end notifies: `ExecutionWaiter`). */
export function executionView(
  r: Omit<Selectable<Database['executions']>, 'submitted_at' | 'updated_at'> & { submitted_at: Date | string; updated_at: Date | string },
): ExecutionView {
  const waiting = r.status === 'running' && r.waiting_for !== null;
  return {
    executionId: r.execution_id,
    sessionId: r.session_id,
    turnId: r.turn_id,
    status: waiting ? 'waiting' : r.status,
    attempts: r.attempts,
    workerId: r.worker_id,
    error: r.error_code ? { code: r.error_code, message: r.error_message ?? '' } : null,
    submittedAt: new Date(r.submitted_at).toISOString(),
    updatedAt: new Date(r.updated_at).toISOString(),
    ...(waiting ? { waitingFor: WaitingFor.parse(JSON.parse(r.waiting_for!)) } : {}),
  };
}

export interface TurnMessageView {
  messageId: string;
  sessionId: string;
  turnId: string;
  order: number;
  role: string;
  sourceType: string;
  pluginId: string | null;
  runtimeId: string | null;
  outputKind: string | null;
  text: string;
  compacted: boolean;
  /** A generated asset's message (the player sees it; its text is empty): fetch its bytes from `GET /v1/sessions/:id/media/:mediaId`. */
  media?: MediaReference;
}

/** Saved summaries a read returns at most (compaction keeps a few segments). */
const SUMMARIES_LIMIT = 64;

/** What `ReadModels.historyView` reads. */
export interface HistoryViewLimits {
  /** More uncompacted messages than this: no rows are read (`overBound`). */
  bound: number;
  /** The last committed messages (compacted or not) the lorebook scans. */
  scan: number;
  /** A regenerated turn's read: this turn (the session's last rows) left out. */
  without?: string;
  /** The saved summaries too, as `summaries` reads them with these options, in the same statement where the view is one. */
  summaries?: { withMessageIds?: boolean };
}

/** The shared history view (`ReadModels.historyView`). */
export interface HistoryView {
  uncompacted: TurnMessageView[];
  scanTail: TurnMessageView[];
  stats: HistoryStats;
  overBound: boolean;
  /** Read when asked for (`HistoryViewLimits.summaries`). */
  summaries?: SummaryView[];
}

export interface SummaryView {
  id: string;
  content: string;
  messageIds?: string[];
  /** Read with the message ids: the summary was shortened on purpose to fit the budget. */
  truncated?: boolean;
}

export interface RecordedCallView {
  position: number;
  sessionId: string;
  turnId: string;
  pluginId: string;
  runtimeId: string;
  callId: string;
  protocol: string;
  /** The request body as an object; a body that is not a JSON object (a hand-made event) reads as `{}`. */
  body: Record<string, unknown>;
  layout?: { systemSections: { name: string; length: number }[]; messageSections: string[] };
  cachedTokens: number | null;
}

export interface PrefixReportView {
  callId: string;
  turnId: string;
  turn: number;
  runtime: string;
  firstInTurn: boolean;
  requestTokensEstimate: number;
  sharedTokensEstimate: number | null;
  sharedPercent: number | null;
  firstDifference: unknown;
  providerCachedTokens: number | null;
  providerInputTokens: number | null;
}

export interface LlmCallView {
  position: number;
  callId: string;
  executionId: string;
  turnId: string;
  pluginId: string;
  runtimeId: string;
  provider: string;
  model: string;
  request: Record<string, unknown>;
  /** The exact bytes sent. */
  requestText: string;
  recordedAt: string;
}

/** A session of the tenant as the inspector lists it. */
export interface SessionSummaryView {
  sessionId: string;
  worldId: string | null;
  /**
   * The revision of the tenant's world the session runs now: the last `session.world-revised@1`'s
   * `toRevision`, else the one `session.created@1` recorded; null for a built-in world or none.
   */
  worldRevision: number | null;
  locale: string;
  createdAt: string;
  /** Executions submitted (turns and activations). */
  turns: number;
  /** The plugins the session runs (ids, sorted), as `session.created@1` recorded them; null: the plugins enabled by default. */
  plugins: string[] | null;
  /** A branch's parent and the turn it was branched at (`session.branched@1`); null: not a branch. */
  branchedFrom: BranchOriginView | null;
}

/** The provider usage of a session's answered calls of one model, summed (`prefix_reports`). */
export interface SessionModelUsageView {
  sessionId: string;
  /** Null for rows the log could not name a model for. */
  model: string | null;
  calls: number;
  inputTokens: number;
  cachedInputTokens: number;
  outputTokens: number;
}

/** An execution's row, the tenant's only: compiled once (`precompiled`), the API reads it for every long-poll of a turn. */
const executionRow = precompiled<Database, { tenantId: string; executionId: string }, Selectable<Database['executions']>>(
  ['tenantId', 'executionId'],
  (db, p) => db.selectFrom('executions').selectAll().where('tenant_id', '=', p.tenantId).where('execution_id', '=', p.executionId),
);

/** Tenant-scoped queries over the projections; every method takes the tenant first. */
export class ReadModels {
  constructor(private readonly db: Kysely<Database>) {}

  /** The alternatives of a player turn (any of them names the group), from the session's log; null: no such turn. */
  async turnAlternatives(tenantId: string, sessionId: string, turnId: string): Promise<TurnAlternativesRecord | null> {
    return readTurnAlternatives(this.db, { tenantId, sessionId, turnId });
  }

  /** Whether the turn is in the session's history (a committed turn in `turn_messages`, or its opening). */
  async historyHasTurn(tenantId: string, sessionId: string, turnId: string): Promise<boolean> {
    return readHistoryHasTurn(this.db, { tenantId, sessionId, turnId });
  }

  /** The session's branches, newest first, at most `limit` (see `readSessionBranches`). */
  async sessionBranches(tenantId: string, sessionId: string, limit: number): Promise<SessionBranchView[]> {
    return readSessionBranches(this.db, { tenantId, sessionId, limit });
  }

  /** The turn of the session's last history row (the one a regeneration may replace), or null for an empty history. */
  async latestTurn(tenantId: string, sessionId: string): Promise<{ turnId: string; executionId: string; compacted: boolean } | null> {
    return readLatestTurn(this.db, { tenantId, sessionId });
  }

  /** What reverting `turnId` takes out of the history (its turns and executions), or null when it is not in the history. */
  async revertScope(tenantId: string, sessionId: string, turnId: string): Promise<RevertScope | null> {
    return readRevertScope(this.db, { tenantId, sessionId, turnId });
  }

  /** A message of the history with its text as edited, or null (unknown, another tenant's, reverted). */
  async historyMessage(tenantId: string, sessionId: string, messageId: string): Promise<HistoryMessageRecord | null> {
    return readHistoryMessage(this.db, { tenantId, sessionId, messageId });
  }

  /** A turn's player input as the history has it now (edited or as typed), or null when the turn has none. */
  async playerInput(tenantId: string, sessionId: string, turnId: string): Promise<{ messageId: string; text: string } | null> {
    return readPlayerInput(this.db, { tenantId, sessionId, turnId });
  }

  async execution(tenantId: string, executionId: string): Promise<ExecutionView | null> {
    const [r] = (await executionRow(this.db, { tenantId, executionId })).rows;
    return r ? executionView(r) : null;
  }

  /**
   * The session's earliest execution not yet committed or failed (the one the session waits on),
   * or null when none is pending.
   */
  async earliestPendingExecution(tenantId: string, sessionId: string): Promise<{ executionId: string; submittedVersion: number } | null> {
    const r = await this.db
      .selectFrom('executions')
      .select(['execution_id', 'submitted_version'])
      .where('session_id', '=', sessionId)
      .where('tenant_id', '=', tenantId)
      .where('status', 'in', ['queued', 'running'])
      .orderBy('submitted_version')
      .limit(1)
      .executeTakeFirst();
    return r ? { executionId: r.execution_id, submittedVersion: r.submitted_version } : null;
  }

  /**
   * The global position a live event stream of the session starts at (its latest committed turn,
   * or its earliest pending input when earlier; see `readLiveStreamStart`); null: from its first event.
   */
  liveStreamStart(tenantId: string, sessionId: string): Promise<number | null> {
    return readLiveStreamStart(this.db, tenantId, sessionId);
  }

  /**
   * The `execution.cancelled@1` that ended an execution of the session (what a repeated cancel
   * answers), read from the session's log; null when it was not cancelled (or is another tenant's).
   */
  async executionCancel(tenantId: string, sessionId: string, executionId: string): Promise<EventData<'execution.cancelled@1'> | null> {
    const { rows } = await sql<{ data: unknown }>`
      select data from events
      where stream_id = ${sessionId} and tenant_id = ${tenantId} and type = 'execution.cancelled@1' and data->>'executionId' = ${executionId}
      order by stream_version
      limit 1`.execute(this.db);
    return rows.length > 0 ? ExecutionCancelledV1.parse(rows[0].data) : null;
  }

  /**
   * Every session's earliest pending execution (its head: later inputs of a session wait for it),
   * a page at a time in session-id order (pass the last session id seen as `afterSessionId`). With
   * `idleForMs`, only heads whose last progress is older than that, measured on the database's
   * clock. Index-friendly: candidates are read from pending rows only (the partial indexes
   * `executions_pending` for the idle ones, `executions_session_pending`), and "no earlier pending
   * execution in the session" is one probe of `executions_session_pending` (measured on PostgreSQL
   * with 200,000 executions, 8,000 pending: an anti-join over the idle pending rows, 3 ms).
   */
  async pendingSessionHeads(
    options: { idleForMs?: number; afterSessionId?: string; limit?: number } = {},
  ): Promise<{ executionId: string; sessionId: string; tenantId: string }[]> {
    let query = this.db
      .selectFrom('executions as e')
      .select(['e.execution_id', 'e.session_id', 'e.tenant_id'])
      .where('e.status', 'in', ['queued', 'running'])
      // a waiting execution has nothing to run until its resume (which enqueues it)
      .where('e.waiting_for', 'is', null)
      .where(({ not, exists, selectFrom }) =>
        not(
          exists(
            selectFrom('executions as earlier')
              .select('earlier.execution_id')
              .whereRef('earlier.session_id', '=', 'e.session_id')
              .where('earlier.status', 'in', ['queued', 'running'])
              .whereRef('earlier.submitted_version', '<', 'e.submitted_version'),
          ),
        ),
      )
      .orderBy('e.session_id')
      .orderBy('e.submitted_version')
      .limit(options.limit ?? 500);
    if (options.idleForMs !== undefined) {
      query = query.where('e.updated_at', '<', sql<Date>`now() - ${options.idleForMs} * interval '1 millisecond'`);
    }
    if (options.afterSessionId !== undefined) query = query.where('e.session_id', '>', options.afterSessionId);
    const rows = await query.execute();
    return rows.map((r) => ({ executionId: r.execution_id, sessionId: r.session_id, tenantId: r.tenant_id }));
  }

  async messages(tenantId: string, sessionId: string, options: { afterOrder?: number; limit?: number } = {}): Promise<TurnMessageView[]> {
    const rows = await this.db
      .selectFrom('turn_messages')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .where('session_id', '=', sessionId)
      .where('ord', '>', options.afterOrder ?? 0)
      .orderBy('ord')
      .limit(options.limit ?? 10_000)
      .execute();
    return rows.map(toMessageView);
  }

  /** The most recent `limit` uncompacted messages of a session, oldest first (bounded history read). */
  async recentMessages(tenantId: string, sessionId: string, limit: number): Promise<TurnMessageView[]> {
    return (await this.historyTails(tenantId, sessionId, { window: limit, scan: 0 })).uncompacted;
  }

  /**
   * The two bounded tails a runtime's request needs, in one range read: the last `window`
   * uncompacted messages (history) and the last `scan` committed ones, compacted or not (the
   * lorebook's scan range).
   */
  async historyTails(
    tenantId: string,
    sessionId: string,
    limits: { window: number; scan: number },
  ): Promise<{ uncompacted: TurnMessageView[]; scanTail: TurnMessageView[] }> {
    // one round trip: the compaction mark and the highest ord (ords are dense, 1..n, so the tails
    // are then read as an ord range: an index range scan whatever the planner's statistics say)
    const { rows: heads } = await sql<{ mark: number | null; last: number | null }>`
      select
        (select compacted_through from history_watermarks where session_id = ${sessionId} and tenant_id = ${tenantId}) as mark,
        (select max(ord) from turn_messages where session_id = ${sessionId}) as last`.execute(this.db);
    const last = Number(heads[0]?.last ?? 0);
    const windowFrom = Math.max(Number(heads[0]?.mark ?? 0), last - limits.window);
    const scanFrom = Math.max(0, last - limits.scan);
    const rows = await this.messages(tenantId, sessionId, { afterOrder: Math.min(windowFrom, scanFrom), limit: Math.max(limits.window, limits.scan) });
    return { uncompacted: rows.filter((r) => r.order > windowFrom), scanTail: rows.filter((r) => r.order > scanFrom) };
  }

  /**
   * Spec §1 step 1: the shared history view, everything uncompacted (compaction keeps it small), the
   * last `scan` committed messages (compacted or not: the lorebook's scan range), and statistics
   * for all of the session's messages. Bounded: ords are dense (1..n) and compaction marks a
   * continuous prefix (up to the watermark), so the message counts come from the watermark and the
   * highest ord, and the rows are one ord range read; the turn count is one aggregate over the
   * session's index range (no rows read). More than `bound` uncompacted messages: no rows are
   * read, `overBound` says so (the caller fails clearly; nothing is cut silently).
   */
  async historyView(tenantId: string, sessionId: string, limits: HistoryViewLimits): Promise<HistoryView> {
    if (limits.without === undefined) return this.historyViewInOneRead(tenantId, sessionId, limits);
    if (limits.summaries !== undefined) {
      // a regenerated turn's view takes reads of its own: the summaries come beside them
      const [view, summaries] = await Promise.all([
        this.historyView(tenantId, sessionId, { bound: limits.bound, scan: limits.scan, without: limits.without }),
        this.summaries(tenantId, sessionId, limits.summaries),
      ]);
      return { ...view, summaries };
    }
    // two index reads, whatever the session's length: its watermark row (tenant-checked) and its
    // last message's ord (max over the (session_id, ord) index: no tenant filter there, which would
    // keep the planner from reading just the index's end; the rows themselves are read
    // tenant-scoped below, as an ord range)
    const { rows: heads } = await sql<{ mark: number | null; last: number | null; turns: number | string | null }>`
      select
        (select compacted_through from history_watermarks where session_id = ${sessionId} and tenant_id = ${tenantId}) as mark,
        (select max(ord) from turn_messages where session_id = ${sessionId}) as last,
        (select turns from history_watermarks where session_id = ${sessionId} and tenant_id = ${tenantId}) as turns`.execute(this.db);
    const last = Number(heads[0]?.last ?? 0);
    // a regenerated turn's read (`without`): the turn it re-runs, the session's last rows, left out
    const left = limits.without === undefined ? 0 : await this.latestTurnRows(sessionId, limits.without, last);
    const total = last - left;
    const compacted = Math.min(total, Number(heads[0]?.mark ?? 0));
    const stats: HistoryStats = { total, compacted, uncompacted: total - compacted, turns: Number(heads[0]?.turns ?? 0) - (left > 0 ? 1 : 0) };
    if (stats.uncompacted > limits.bound) return { uncompacted: [], scanTail: [], stats, overBound: true };
    const scanFrom = Math.max(0, total - limits.scan);
    const from = Math.min(compacted, scanFrom);
    const rows = total > from ? await this.messages(tenantId, sessionId, { afterOrder: from, limit: total - from }) : [];
    return { uncompacted: rows.filter((r) => r.order > compacted), scanTail: rows.filter((r) => r.order > scanFrom), stats, overBound: false };
  }

  /**
   * `historyView` without a left-out turn, in one statement: the same two index reads (watermark
   * row, highest ord) and, when the uncompacted messages are within `bound`, the ord range of rows
   * they decide, read in the same snapshot.
   */
  private async historyViewInOneRead(tenantId: string, sessionId: string, limits: HistoryViewLimits): Promise<HistoryView> {
    const { rows } = await sql<{ view: unknown }>`select ${historyViewJson(tenantId, sessionId, limits)} as view`.execute(this.db);
    return historyViewOf(rows[0].view, limits);
  }

  /** How many of the session's last rows (through ord `last`) are `turnId`'s: 0 when its rows are not the last ones. */
  private async latestTurnRows(sessionId: string, turnId: string, last: number): Promise<number> {
    const row = await this.db
      .selectFrom('turn_messages')
      .select([sql<number | null>`min(ord)`.as('first'), sql<number | null>`max(ord)`.as('final'), sql<number>`count(*)`.as('rows')])
      .where('session_id', '=', sessionId)
      .where('turn_id', '=', turnId)
      .executeTakeFirst();
    const rows = Number(row?.rows ?? 0);
    return rows > 0 && Number(row?.final) === last && Number(row?.first) === last - rows + 1 ? rows : 0;
  }

  /**
   * The ids of a session's oldest `limit` uncompacted messages, oldest first (bounded): what a
   * compaction may mark, and the same read its event is checked against when it is appended.
   */
  async uncompactedPrefix(tenantId: string, sessionId: string, limit: number): Promise<string[]> {
    return (await readUncompactedPrefix(this.db, { sessionId, limit, tenantId })).map((m) => m.messageId);
  }

  /**
   * Saved summaries of a session in story order (compaction keeps at most a few segments). The
   * covered message ids (which grow with the session) are read only when asked for.
   */
  async summaries(tenantId: string, sessionId: string, options: { withMessageIds?: boolean; limit?: number } = {}): Promise<SummaryView[]> {
    const rows = await this.db
      .selectFrom('summaries')
      .select(options.withMessageIds ? ['summary_id', 'content', 'message_ids', 'truncated'] : ['summary_id', 'content'])
      .where('tenant_id', '=', tenantId)
      .where('session_id', '=', sessionId)
      .orderBy('seq')
      .limit(options.limit ?? SUMMARIES_LIMIT)
      .execute();
    return rows.map(toSummaryView);
  }

  /**
   * Operator view (not tenant-scoped, for offline tools): every recorded llm.calling with its
   * layout and the cached tokens its llm.responded reported, in log order.
   */
  async recordedCalls(sessionId?: string): Promise<RecordedCallView[]> {
    let q = this.db
      .selectFrom('trace_events')
      .select(['global_position', 'session_id', 'turn_id', 'plugin_id', 'runtime_id', 'call_id', 'type', 'data'])
      .orderBy('global_position');
    if (sessionId) q = q.where('session_id', '=', sessionId);
    const rows = await q.execute();
    const cached = new Map<string, number>();
    for (const r of rows) if (r.type === 'llm.responded@1') cached.set(r.call_id, (r.data as { usage: { cachedInputTokens: number } }).usage.cachedInputTokens);
    return rows
      .filter((r) => r.type === 'llm.calling@1')
      .map((r) => {
        const data = r.data as { provider: string; body: string; layout?: RecordedCallView['layout'] };
        return {
          position: Number(r.global_position),
          sessionId: r.session_id,
          turnId: r.turn_id,
          pluginId: r.plugin_id,
          runtimeId: r.runtime_id,
          callId: r.call_id,
          protocol: data.provider,
          body: requestObject(data.body),
          layout: data.layout,
          cachedTokens: cached.get(r.call_id) ?? null,
        };
      });
  }

  async prefixReport(tenantId: string, sessionId: string): Promise<PrefixReportView[]> {
    const rows = await this.db
      .selectFrom('prefix_reports')
      .select([
        'call_id',
        'turn_id',
        'turn',
        'runtime',
        'first_in_turn',
        'request_tokens',
        'shared_tokens',
        'shared_percent',
        'first_difference',
        'provider_cached_tokens',
        'provider_input_tokens',
      ])
      .where('tenant_id', '=', tenantId)
      .where('session_id', '=', sessionId)
      .orderBy('position')
      .execute();
    return rows.map((r) => ({
      callId: r.call_id,
      turnId: r.turn_id,
      turn: r.turn,
      runtime: r.runtime,
      firstInTurn: r.first_in_turn,
      requestTokensEstimate: r.request_tokens,
      sharedTokensEstimate: r.shared_tokens,
      sharedPercent: r.shared_percent,
      firstDifference: r.first_difference ?? null,
      providerCachedTokens: r.provider_cached_tokens,
      providerInputTokens: r.provider_input_tokens,
    }));
  }

  /** The tenant's sessions, newest first (at most `limit`): the log's `session.created@1`, with their turn counts (executions, less regenerations). */
  async sessions(tenantId: string, limit: number): Promise<SessionSummaryView[]> {
    return this.sessionSummaries(tenantId, { limit });
  }

  /** One session of the tenant as the list gives it; null when there is none (or it is another tenant's). */
  async session(tenantId: string, sessionId: string): Promise<SessionSummaryView | null> {
    return (await this.sessionSummaries(tenantId, { limit: 1, sessionId }))[0] ?? null;
  }

  private async sessionSummaries(tenantId: string, query: { limit: number; sessionId?: string }): Promise<SessionSummaryView[]> {
    let created = this.db
      .selectFrom('events')
      .select(['stream_id', 'data', 'recorded_at'])
      .where('tenant_id', '=', tenantId)
      .where('type', '=', 'session.created@1');
    if (query.sessionId !== undefined) created = created.where('stream_id', '=', query.sessionId);
    const rows = await created.orderBy('global_position', 'desc').limit(query.limit).execute();
    if (rows.length === 0) return [];
    const counts = await this.db
      .selectFrom('executions')
      .select(['session_id', (eb) => eb.fn.countAll<string>().as('n')])
      .where('tenant_id', '=', tenantId)
      .where(
        'session_id',
        'in',
        rows.map((r) => r.stream_id),
      )
      .groupBy('session_id')
      .execute();
    // a regeneration (`POST …/retry`) is an execution of its turn, not a turn of its own
    const regenerations = await this.db
      .selectFrom('events')
      .select(['stream_id', (eb) => eb.fn.countAll<string>().as('n')])
      .where('tenant_id', '=', tenantId)
      .where(
        'stream_id',
        'in',
        rows.map((r) => r.stream_id),
      )
      .where('type', '=', 'player-input.submitted@1')
      .where(sql<string | null>`data->>'alternativeOf'`, 'is not', null)
      .groupBy('stream_id')
      .execute();
    // the revision each session was last moved to (`POST …/world-revision`): the latest such event per session
    const moves = await this.db
      .selectFrom('events')
      .select(['stream_id', sql<number>`(data->>'toRevision')::int`.as('to_revision')])
      .distinctOn('stream_id')
      .where('tenant_id', '=', tenantId)
      .where(
        'stream_id',
        'in',
        rows.map((r) => r.stream_id),
      )
      .where('type', '=', 'session.world-revised@1')
      .orderBy('stream_id')
      .orderBy('global_position', 'desc')
      .execute();
    // the branches among them: their first event names the parent (one read of the streams' first rows)
    const origins = await readBranchOrigins(
      this.db,
      tenantId,
      rows.map((r) => r.stream_id),
    );
    const movedTo = new Map(moves.map((m) => [m.stream_id, Number(m.to_revision)]));
    const regenerated = new Map(regenerations.map((c) => [c.stream_id, Number(c.n)]));
    const count = new Map(counts.map((c) => [c.session_id, Number(c.n) - (regenerated.get(c.session_id) ?? 0)]));
    return rows.map((r) => {
      const data = r.data as { worldId: string | null; worldRevision?: number; locale: string; plugins?: string[] };
      return {
        sessionId: r.stream_id,
        worldId: data.worldId,
        worldRevision: movedTo.get(r.stream_id) ?? data.worldRevision ?? null,
        locale: data.locale,
        createdAt: new Date(r.recorded_at).toISOString(),
        turns: count.get(r.stream_id) ?? 0,
        plugins: data.plugins ?? null,
        branchedFrom: origins.get(r.stream_id) ?? null,
      };
    });
  }

  /**
   * How many uncompacted messages each of the tenant's given sessions has (what its next turn's
   * shared history reads): two index reads per session whatever its length — its last message's
   * ord (ords are dense, 1..n) and its compaction watermark — in one statement, no row read.
   */
  async uncompactedCounts(tenantId: string, sessionIds: readonly string[]): Promise<Map<string, number>> {
    if (sessionIds.length === 0) return new Map();
    const ids = sql.join(sessionIds.map((id) => sql`(${id})`));
    const { rows } = await sql<{ session_id: string; last: number | null; mark: number | null }>`
      select s.id as session_id,
        (select max(ord) from turn_messages where session_id = s.id and tenant_id = ${tenantId}) as last,
        (select compacted_through from history_watermarks where session_id = s.id and tenant_id = ${tenantId}) as mark
      from (values ${ids}) as s(id)`.execute(this.db);
    return new Map(rows.map((r) => [r.session_id, Math.max(0, Number(r.last ?? 0) - Number(r.mark ?? 0))]));
  }

  /**
   * The provider usage of the given sessions' answered calls, summed per session and model: one
   * grouped read of `prefix_reports` (an async projection: it may lag the log by a moment).
   */
  async sessionModelUsage(tenantId: string, sessionIds: readonly string[]): Promise<SessionModelUsageView[]> {
    if (sessionIds.length === 0) return [];
    const rows = await this.db
      .selectFrom('prefix_reports')
      .select((eb) => [
        'session_id',
        'model',
        eb.fn.countAll<string>().as('calls'),
        eb.fn.sum<string>('provider_input_tokens').as('input'),
        eb.fn.sum<string>('provider_cached_tokens').as('cached'),
        eb.fn.sum<string>(eb.fn.coalesce('provider_output_tokens', sql.lit(0))).as('output'),
      ])
      .where('tenant_id', '=', tenantId)
      .where('session_id', 'in', [...sessionIds])
      .where('provider_input_tokens', 'is not', null)
      .groupBy(['session_id', 'model'])
      .execute();
    return rows.map((r) => ({
      sessionId: r.session_id,
      model: r.model,
      calls: Number(r.calls),
      inputTokens: Number(r.input ?? 0),
      cachedInputTokens: Number(r.cached ?? 0),
      outputTokens: Number(r.output ?? 0),
    }));
  }

  async llmCalls(tenantId: string, sessionId: string): Promise<LlmCallView[]> {
    const rows = await this.db
      .selectFrom('trace_events')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .where('session_id', '=', sessionId)
      .where('type', '=', 'llm.calling@1')
      .orderBy('global_position')
      .execute();
    return rows.map((r) => {
      const data = r.data as { provider: string; model: string; body: string };
      return {
        position: Number(r.global_position),
        callId: r.call_id,
        executionId: r.execution_id,
        turnId: r.turn_id,
        pluginId: r.plugin_id,
        runtimeId: r.runtime_id,
        provider: data.provider,
        model: data.model,
        request: requestObject(data.body),
        requestText: data.body,
        recordedAt: new Date(r.recorded_at).toISOString(),
      };
    });
  }
}

/** A recorded request body as an object; a body that is not a JSON object (a hand-made event) reads as `{}` (`requestText` keeps it as sent). */
function requestObject(body: string): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(body);
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/**
 * `historyView` without a left-out turn as one JSON value (`historyViewOf` reads it), for a
 * statement of its own or beside another read (`EventStore.readPendingSuffix`'s `alongside`): the
 * two index reads (watermark row, highest ord) and, when the uncompacted messages are within
 * `bound`, the ord range of rows they decide, read in the same snapshot; with `summaries`, the saved
 * summaries as `summaries` reads them. Every read tenant-scoped but the highest ord (the index's
 * end; the rows themselves are read tenant-scoped).
 */
export function historyViewJson(tenantId: string, sessionId: string, limits: Omit<HistoryViewLimits, 'without'>): RawBuilder<unknown> {
  const summary = limits.summaries?.withMessageIds
    ? sql`json_build_object('summary_id', x.summary_id, 'content', x.content, 'message_ids', x.message_ids, 'truncated', x.truncated)`
    : sql`json_build_object('summary_id', x.summary_id, 'content', x.content)`;
  const summaries =
    limits.summaries === undefined
      ? sql`null::json`
      : sql`(select coalesce(json_agg(${summary} order by x.seq), '[]'::json) from (
          select * from summaries where tenant_id = ${tenantId} and session_id = ${sessionId} order by seq limit ${SUMMARIES_LIMIT}
        ) x)`;
  // `h` materialized: read once; inlined, each use of h.mark and h.last ran its own copy of the
  // index reads (16 init plans where 3 do, issue 33)
  return sql`(
    with h as materialized (
      select
        coalesce((select compacted_through from history_watermarks where session_id = ${sessionId} and tenant_id = ${tenantId}), 0) as mark,
        coalesce((select max(ord) from turn_messages where session_id = ${sessionId}), 0) as last,
        (select turns from history_watermarks where session_id = ${sessionId} and tenant_id = ${tenantId}) as turns
    )
    select json_build_object(
      'mark', h.mark,
      'last', h.last,
      'turns', h.turns,
      'rows', (
        select coalesce(json_agg(m order by m.ord), '[]'::json) from (
          select * from turn_messages
          where tenant_id = ${tenantId} and session_id = ${sessionId}
            and h.last - least(h.last, h.mark) <= ${limits.bound}::int
            and ord > least(least(h.last, h.mark), greatest(0, h.last - ${limits.scan}::int)) and ord <= h.last
        ) m
      ),
      'summaries', ${summaries}
    ) from h
  )`;
}

/** The history view `historyViewJson` read (the same `limits`). */
export function historyViewOf(json: unknown, limits: Omit<HistoryViewLimits, 'without'>): HistoryView {
  const head = json as {
    mark: number | string | null;
    last: number | string | null;
    turns: number | string | null;
    rows: Selectable<TurnMessagesTable>[];
    summaries: SummaryRow[] | null;
  };
  const read = limits.summaries === undefined ? {} : { summaries: (head.summaries ?? []).map(toSummaryView) };
  const total = Number(head.last ?? 0);
  const compacted = Math.min(total, Number(head.mark ?? 0));
  const stats: HistoryStats = { total, compacted, uncompacted: total - compacted, turns: Number(head.turns ?? 0) };
  if (stats.uncompacted > limits.bound) return { uncompacted: [], scanTail: [], stats, overBound: true, ...read };
  const scanFrom = Math.max(0, total - limits.scan);
  const messages = head.rows.map(toMessageView);
  return { uncompacted: messages.filter((r) => r.order > compacted), scanTail: messages.filter((r) => r.order > scanFrom), stats, overBound: false, ...read };
}

/** A summary row as `summaries` selects it (the message ids and `truncated` only when asked for). */
interface SummaryRow {
  summary_id: string;
  content: string;
  message_ids?: unknown;
  truncated?: boolean;
}

function toSummaryView(r: SummaryRow): SummaryView {
  return {
    id: r.summary_id,
    content: r.content,
    ...('message_ids' in r ? { messageIds: r.message_ids as string[], truncated: r.truncated as boolean } : {}),
  };
}

function toMessageView(r: Selectable<TurnMessagesTable>): TurnMessageView {
  return {
    messageId: r.message_id,
    sessionId: r.session_id,
    turnId: r.turn_id,
    order: r.ord,
    role: r.role,
    sourceType: r.source_type,
    pluginId: r.plugin_id,
    runtimeId: r.runtime_id,
    outputKind: r.output_kind,
    text: r.text,
    compacted: r.compacted,
    ...(r.media ? { media: r.media as MediaReference } : {}),
  };
}
