import { CACHE_BOUNDARY_SECTIONS, estimateTokens } from '../context';
import type { EventData, StoredEvent } from '../events';
import { comparePrefix, type FirstDifference, messageSectionOf, type RecordedRequest } from './prefix-compare';
import { prefixUnits } from './prefix-units';

/**
 * What the web inspector shows, derived from a session's events alone (pure: the caller reads the
 * stream). Each request is shown as the model saw it: its units (tools, system, messages) in wire
 * order, the system prompt split into its recorded sections, each message labelled with its
 * section, the cache boundaries the adapter set, and the prefix it shares with the previous turn's
 * request (the prefix report's own comparison, `comparePrefix`).
 */

export interface SessionTurnView {
  /** The alternative in the history (see `alternatives`): its turn, execution and figures. */
  turnId: string;
  executionId: string;
  /** 1-based, in log order; a regenerated turn keeps its number. */
  number: number;
  kind: 'input' | 'activation';
  /** The player's text, or `plugin/runtime (manual|event)` for an activation. */
  input: string;
  status: 'running' | 'committed' | 'failed' | 'cancelled';
  calls: number;
  /** Sum over the turn's calls of the estimated request tokens. */
  requestTokensEstimate: number;
  /** Sums of what the provider reported (null: no call was answered). */
  providerInputTokens: number | null;
  providerCachedTokens: number | null;
  /**
   * The turn as first played and each regeneration of it (`POST …/turns/:turnId/retry`), oldest
   * first; one entry for a turn never regenerated. `selected`: the one in the history (the latest
   * regeneration that committed, or the one chosen by `select`).
   */
  alternatives: SessionTurnAlternativeView[];
}

export interface SessionTurnAlternativeView {
  turnId: string;
  executionId: string;
  status: 'running' | 'committed' | 'failed' | 'cancelled';
  calls: number;
  selected: boolean;
}

export interface CacheBoundaryView {
  /** UTF-16 offset into the unit's text: the boundary follows the text before it. */
  offset: number;
  /** `cache_control`: a breakpoint on the wire (Anthropic); `sentinel`: the engine's internal boundary, stripped on the wire (the provider caches the prefix on its own). */
  kind: 'cache_control' | 'sentinel';
  /** The section it closes, where the layout tells it. */
  after: string | null;
}

export interface UnitSpanView {
  name: string;
  start: number;
  end: number;
}

export interface RequestUnitView {
  kind: 'tools' | 'system' | 'message';
  role: string;
  messageIndex: number | null;
  text: string;
  /** The message's section (`layout.messageSections`); null where the layout does not tell it. */
  section: string | null;
  /** The system prompt's sections as recorded (`layout.systemSections`), as spans of `text`. */
  spans: UnitSpanView[];
  cacheBoundaries: CacheBoundaryView[];
}

export interface PrefixComparisonView {
  /** The call compared with: the previous turn's first call of the same runtime, or the previous step of this one. */
  previousCallId: string;
  previousTurnId: string;
  sharedTokensEstimate: number;
  sharedPercent: number;
  firstDifference: FirstDifference | null;
  /** Units before `differsAtUnit` are shared whole; that unit up to `firstDifference.offset`. null: the whole request is shared. */
  differsAtUnit: number | null;
}

export interface ToolActivityView {
  toolCallId: string;
  name: string;
  arguments: string;
  content: string | null;
  ok: boolean | null;
}

export interface CallInspectionView {
  position: number;
  callId: string;
  executionId: string;
  attempt: number;
  step: number;
  pluginId: string;
  runtimeId: string;
  protocol: string;
  model: string;
  recordedAt: string;
  fallback: string | null;
  /** False in logs written before layouts were recorded: sections are then not known. */
  hasLayout: boolean;
  units: RequestUnitView[];
  requestTokensEstimate: number;
  usage: { inputTokens: number; outputTokens: number; cachedInputTokens: number } | null;
  reply: { text: string; toolCalls: unknown[] } | null;
  tools: ToolActivityView[];
  comparison: PrefixComparisonView | null;
}

type Calling = EventData<'llm.calling@1'>;
type Started = { turnId: string; executionId: string; kind: 'input' | 'activation'; input: string };

function startOf(e: StoredEvent): Started | null {
  if (e.type === 'player-input.submitted@1') return { turnId: e.data.turnId, executionId: e.data.executionId, kind: 'input', input: e.data.text };
  if (e.type === 'runtime.activated@1')
    return { turnId: e.data.turnId, executionId: e.data.executionId, kind: 'activation', input: `${e.data.pluginId}/${e.data.runtimeId} (${e.data.kind})` };
  return null;
}

type TurnFigures = Omit<SessionTurnView, 'number' | 'alternatives'>;

/**
 * The session's turns in log order, with their request sizes and cache reads (the per-session chart).
 * A regeneration is an alternative of the turn it re-runs (its input's `alternativeOf`), not a turn
 * of its own: the turn's figures are those of the alternative in the history (`turn.superseded@1`
 * names it).
 */
export function sessionTurns(events: readonly StoredEvent[]): SessionTurnView[] {
  const runs = new Map<string, TurnFigures>();
  const groups = new Map<string, { runs: TurnFigures[]; selected: string }>();
  const groupOf = new Map<string, string>();
  for (const e of events) {
    const started = startOf(e);
    if (started) {
      const run: TurnFigures = { ...started, status: 'running', calls: 0, requestTokensEstimate: 0, providerInputTokens: null, providerCachedTokens: null };
      runs.set(started.turnId, run);
      const root = e.type === 'player-input.submitted@1' ? (e.data.alternativeOf ?? e.data.retryFromTurnId) : undefined;
      const group = root === undefined ? undefined : groups.get(groupOf.get(root) ?? root);
      if (group) {
        group.runs.push(run);
        groupOf.set(started.turnId, groupOf.get(root!) ?? root!);
      } else {
        groups.set(started.turnId, { runs: [run], selected: started.turnId });
        groupOf.set(started.turnId, started.turnId);
      }
      continue;
    }
    if (e.type === 'turn.superseded@1') {
      const group = groups.get(groupOf.get(e.data.turnId) ?? e.data.alternativeOf);
      if (group) group.selected = e.data.byTurnId;
      continue;
    }
    const run = 'turnId' in e.data ? runs.get(e.data.turnId as string) : undefined;
    if (!run) continue;
    if (e.type === 'turn.committed@1') run.status = 'committed';
    else if (e.type === 'execution.failed@1') run.status = 'failed';
    else if (e.type === 'execution.cancelled@1') run.status = 'cancelled';
    else if (e.type === 'llm.calling@1') {
      run.calls += 1;
      run.requestTokensEstimate += requestTokens(recordedRequest(e.data));
    } else if (e.type === 'llm.responded@1') {
      run.providerInputTokens = (run.providerInputTokens ?? 0) + e.data.usage.inputTokens;
      run.providerCachedTokens = (run.providerCachedTokens ?? 0) + e.data.usage.cachedInputTokens;
    }
  }
  return [...groups.values()].map((group, i) => {
    const shown = group.runs.find((r) => r.turnId === group.selected) ?? group.runs[0];
    return {
      ...shown,
      number: i + 1,
      alternatives: group.runs.map((r) => ({ turnId: r.turnId, executionId: r.executionId, status: r.status, calls: r.calls, selected: r === shown })),
    };
  });
}

/** True when the session's events hold the turn. */
export const hasTurn = (events: readonly StoredEvent[], turnId: string): boolean => events.some((e) => startOf(e)?.turnId === turnId);

/** Every model call of one turn, each compared with its predecessor (see `PrefixComparisonView`). */
export function inspectTurnCalls(events: readonly StoredEvent[], turnId: string): CallInspectionView[] {
  const responded = new Map<string, EventData<'llm.responded@1'>>();
  const toolsOf = new Map<string, ToolActivityView[]>();
  for (const e of events) {
    if (e.type === 'llm.responded@1') responded.set(e.data.callId, e.data);
    else if (e.type === 'tool.called@1' && e.data.turnId === turnId) {
      const key = `${e.data.executionId}/${e.data.pluginId}/${e.data.runtimeId}/${e.data.step}`;
      toolsOf.set(key, [
        ...(toolsOf.get(key) ?? []),
        { toolCallId: e.data.toolCallId, name: e.data.name, arguments: e.data.arguments, content: null, ok: null },
      ]);
    } else if (e.type === 'tool.completed@1' && e.data.turnId === turnId) {
      const key = `${e.data.executionId}/${e.data.pluginId}/${e.data.runtimeId}/${e.data.step}`;
      const call = toolsOf.get(key)?.find((t) => t.toolCallId === e.data.toolCallId);
      if (call) Object.assign(call, { content: e.data.content, ok: e.data.ok });
    }
  }
  // the call each one is compared with: per runtime, the previous turn's first call, or this turn's previous step
  const firstOfTurn = new Map<string, { callId: string; turnId: string; request: RecordedRequest }>();
  const lastInTurn = new Map<string, { callId: string; turnId: string; request: RecordedRequest }>();
  const out: CallInspectionView[] = [];
  const previousFirst = new Map<string, { callId: string; turnId: string; request: RecordedRequest }>();
  // a regeneration re-runs its turn from the same history: compared, like the turn first played, with the turn before
  const groupOf = new Map<string, string>();
  for (const e of events)
    if (e.type === 'player-input.submitted@1') groupOf.set(e.data.turnId, e.data.alternativeOf ?? e.data.retryFromTurnId ?? e.data.turnId);
  const previousOfGroup = new Map<string, Map<string, { callId: string; turnId: string; request: RecordedRequest }>>();
  // calls of a turn are contiguous (a session's turns run one at a time), though a later input may be logged among them
  let callsOfTurn: string | null = null;
  for (const e of events) {
    if (e.type !== 'llm.calling@1') continue;
    if (e.data.turnId !== callsOfTurn) {
      callsOfTurn = e.data.turnId;
      for (const [runtime, first] of firstOfTurn) previousFirst.set(runtime, first);
      firstOfTurn.clear();
      lastInTurn.clear();
      const group = groupOf.get(callsOfTurn) ?? callsOfTurn;
      const before = previousOfGroup.get(group);
      if (before) {
        previousFirst.clear();
        for (const [runtime, first] of before) previousFirst.set(runtime, first);
      } else previousOfGroup.set(group, new Map(previousFirst));
    }
    const d = e.data;
    const runtime = `${d.pluginId}/${d.runtimeId}`;
    const request = recordedRequest(d);
    const here = { callId: d.callId, turnId: d.turnId, request };
    const previous = lastInTurn.get(runtime) ?? previousFirst.get(runtime);
    if (!firstOfTurn.has(runtime)) firstOfTurn.set(runtime, here);
    lastInTurn.set(runtime, here);
    if (d.turnId !== turnId) continue;
    out.push(callView(e, d, request, previous ?? null, responded.get(d.callId) ?? null, toolsOf.get(`${d.executionId}/${runtime}/${d.step ?? 1}`) ?? []));
  }
  return out;
}

function recordedRequest(d: Calling): RecordedRequest {
  return { protocol: d.provider, body: JSON.parse(d.body) as Record<string, unknown>, ...(d.layout ? { layout: d.layout } : {}) };
}

const requestTokens = (request: RecordedRequest): number => prefixUnits(request.protocol, request.body).reduce((t, u) => t + estimateTokens(u.text), 0);

function callView(
  e: StoredEvent,
  d: Calling,
  request: RecordedRequest,
  previous: { callId: string; turnId: string; request: RecordedRequest } | null,
  answer: EventData<'llm.responded@1'> | null,
  tools: ToolActivityView[],
): CallInspectionView {
  const units = unitViews(request);
  let comparison: PrefixComparisonView | null = null;
  if (previous) {
    const cmp = comparePrefix(previous.request, request);
    const diff = cmp.firstDifference;
    const at = diff
      ? units.findIndex((u) => (diff.messageIndex === null ? u.kind !== 'message' && u.role === diff.role : u.messageIndex === diff.messageIndex))
      : -1;
    comparison = {
      previousCallId: previous.callId,
      previousTurnId: previous.turnId,
      sharedTokensEstimate: cmp.sharedTokens,
      sharedPercent: cmp.sharedPercent,
      firstDifference: diff,
      differsAtUnit: diff ? (at >= 0 ? at : 0) : null,
    };
  }
  return {
    position: e.globalPosition,
    callId: d.callId,
    executionId: d.executionId,
    attempt: d.attempt,
    step: d.step ?? 1,
    pluginId: d.pluginId,
    runtimeId: d.runtimeId,
    protocol: d.provider,
    model: d.model,
    recordedAt: e.recordedAt,
    fallback: d.fallback ?? null,
    hasLayout: d.layout !== undefined,
    units,
    requestTokensEstimate: requestTokens(request),
    usage: answer ? { ...answer.usage } : null,
    reply: answer?.reply ? replyOf(answer.reply) : null,
    tools,
    comparison,
  };
}

function replyOf(text: string): { text: string; toolCalls: unknown[] } {
  const parsed = JSON.parse(text) as { text?: unknown; toolCalls?: unknown };
  return { text: typeof parsed.text === 'string' ? parsed.text : '', toolCalls: Array.isArray(parsed.toolCalls) ? parsed.toolCalls : [] };
}

function unitViews(request: RecordedRequest): RequestUnitView[] {
  const layout = request.layout;
  return prefixUnits(request.protocol, request.body).map((u) => {
    const spans = u.kind === 'system' && layout ? systemSpans(request, u.text.length) : [];
    const marks: CacheBoundaryView[] = (u.cacheMarks ?? []).map((offset) => ({ offset, kind: 'cache_control', after: spanAt(spans, offset - 1) }));
    // providers without explicit breakpoints: the sentinels the adapter stripped, where the layout places them
    const sentinels: CacheBoundaryView[] =
      request.protocol === 'anthropic' || u.kind !== 'system'
        ? []
        : spans.filter((s) => (CACHE_BOUNDARY_SECTIONS as readonly string[]).includes(s.name)).map((s) => ({ offset: s.end, kind: 'sentinel', after: s.name }));
    return {
      kind: u.kind,
      role: u.role,
      messageIndex: u.messageIndex,
      text: u.text,
      section: u.kind === 'message' && u.messageIndex !== null ? messageSectionOf(request, u.messageIndex) : u.kind === 'system' ? 'system' : null,
      spans,
      cacheBoundaries: [...marks, ...sentinels],
    };
  });
}

/** The recorded system sections as spans of the system unit (joined with one blank line); what follows them is the leading turn context, if any. */
function systemSpans(request: RecordedRequest, total: number): UnitSpanView[] {
  const spans: UnitSpanView[] = [];
  let at = 0;
  for (const s of request.layout?.systemSections ?? []) {
    spans.push({ name: s.name, start: at, end: Math.min(at + s.length, total) });
    at += s.length + 2;
  }
  if (at < total) spans.push({ name: request.layout?.messageSections[1] === 'turn-context' ? 'turn-context' : 'system (rest)', start: at, end: total });
  return spans;
}

const spanAt = (spans: readonly UnitSpanView[], offset: number): string | null => spans.find((s) => offset >= s.start && offset < s.end + 2)?.name ?? null;
