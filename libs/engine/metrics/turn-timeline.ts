import { type Kysely, sql } from 'kysely';
import { type Database, precompiled, type StoredEvent } from '../../events';

/** One event of an execution, as the timeline reads it (no bodies, no text). */
export interface TimelineEvent {
  type: string;
  recordedAt: number;
  callId: string | null;
  attempt: number | null;
  stage: string | null;
  runtime: string | null;
}

/** Where the wall time of one committed turn went, all in milliseconds. */
export interface TurnTimeline {
  /** Input (or activation) recorded → `turn.committed` recorded. */
  latencyMs: number;
  /** Time in which at least one model call of the turn was in flight (`llm.calling` → its `llm.responded`). */
  modelMs: number;
  /** latency − model time: what the engine itself spent (queue, reads, prompt assembly, appends). */
  overheadMs: number;
  /** Per stage of the committed attempt, in the order its outputs were recorded. */
  stages: { stage: string; ms: number }[];
  /** Per runtime of the committed attempt: its stage's start → its output recorded. */
  runtimes: { runtime: string; stage: string; ms: number }[];
}

/** A stage label for an output recorded without one (an activation's runtime). */
export const NO_STAGE = '(none)';

const TYPES = [
  'player-input.submitted@1',
  'runtime.activated@1',
  'execution.started@1',
  'llm.calling@1',
  'llm.responded@1',
  'runtime.output.produced@1',
  'turn.committed@1',
] as const;

/** The event types a turn's timeline reads. */
export const TIMELINE_TYPES: ReadonlySet<string> = new Set(TYPES);

/**
 * The wall time of one committed turn from its events (pure). Intervals come from `recorded_at`, so
 * they hold whichever worker recorded each event. A model call that has no `llm.responded` (a
 * streaming call replaced by its fallback, an attempt that failed) adds no model time.
 */
export function turnTimeline(events: readonly TimelineEvent[], committedAttempt: number): TurnTimeline | null {
  const input = events.find((e) => e.type === 'player-input.submitted@1' || e.type === 'runtime.activated@1');
  const committed = events.find((e) => e.type === 'turn.committed@1');
  if (!input || !committed) return null;
  const latencyMs = Math.max(0, committed.recordedAt - input.recordedAt);
  const calling = new Map<string, number>();
  const intervals: [number, number][] = [];
  for (const e of events) {
    if (e.type === 'llm.calling@1' && e.callId) calling.set(e.callId, e.recordedAt);
    if (e.type === 'llm.responded@1' && e.callId && calling.has(e.callId)) intervals.push([calling.get(e.callId)!, e.recordedAt]);
  }
  const modelMs = unionLength(intervals);
  const started = events.filter((e) => e.type === 'execution.started@1' && e.attempt === committedAttempt).at(-1);
  const outputs = events.filter((e) => e.type === 'runtime.output.produced@1' && e.attempt === committedAttempt);
  const stages: TurnTimeline['stages'] = [];
  const runtimes: TurnTimeline['runtimes'] = [];
  let stageStart = started?.recordedAt ?? input.recordedAt;
  for (const [stage, produced] of groupByStage(outputs)) {
    const end = Math.max(...produced.map((o) => o.recordedAt));
    stages.push({ stage, ms: Math.max(0, end - stageStart) });
    for (const o of produced) if (o.runtime) runtimes.push({ runtime: o.runtime, stage, ms: Math.max(0, o.recordedAt - stageStart) });
    stageStart = end;
  }
  return { latencyMs, modelMs, overheadMs: Math.max(0, latencyMs - modelMs), stages, runtimes };
}

/** Outputs grouped by stage, the stages in the order their first output was recorded. */
function groupByStage(outputs: readonly TimelineEvent[]): Map<string, TimelineEvent[]> {
  const groups = new Map<string, TimelineEvent[]>();
  for (const o of outputs) {
    const stage = o.stage ?? NO_STAGE;
    groups.set(stage, [...(groups.get(stage) ?? []), o]);
  }
  return groups;
}

/** The length of the union of closed intervals (overlapping calls of parallel runtimes count once). */
export function unionLength(intervals: readonly [number, number][]): number {
  const sorted = [...intervals].filter(([a, b]) => b >= a).sort((x, y) => x[0] - y[0]);
  let total = 0;
  let current: [number, number] | null = null;
  for (const [a, b] of sorted) {
    if (current && a <= current[1]) current[1] = Math.max(current[1], b);
    else {
      if (current) total += current[1] - current[0];
      current = [a, b];
    }
  }
  return total + (current ? current[1] - current[0] : 0);
}

interface TimelineRow {
  type: string;
  recorded_at: Date | string;
  execution_id: string | null;
  call_id: string | null;
  attempt: string | null;
  stage: string | null;
  plugin_id: string | null;
  runtime_id: string | null;
}

/** The timeline's one statement, compiled once (it runs on every committed turn's metrics). */
const timelineRows = precompiled<Database, { tenantId: string; sessionId: string; executionId: string; committedVersion: number }, TimelineRow>(
  ['tenantId', 'sessionId', 'executionId', 'committedVersion'],
  (db, p) =>
    // one statement: the execution's input version is a subquery (no execution: no rows)
    db
      .selectFrom('events')
      .select([
        'type',
        'recorded_at',
        sql<string | null>`data->>'executionId'`.as('execution_id'),
        sql<string | null>`data->>'callId'`.as('call_id'),
        sql<string | null>`data->>'attempt'`.as('attempt'),
        sql<string | null>`data->>'stage'`.as('stage'),
        sql<string | null>`data->>'pluginId'`.as('plugin_id'),
        sql<string | null>`data->>'runtimeId'`.as('runtime_id'),
      ])
      .where('stream_id', '=', p.sessionId)
      .where('tenant_id', '=', p.tenantId)
      .where('stream_version', '>=', (eb) =>
        eb.selectFrom('executions').select('submitted_version').where('tenant_id', '=', p.tenantId).where('execution_id', '=', p.executionId),
      )
      .where('stream_version', '<=', p.committedVersion)
      .where('type', 'in', TYPES)
      .orderBy('stream_version'),
);

/**
 * Reads the events of one execution, from its input (`executions.submitted_version`) up to its
 * commit: one range of the stream's unique index, only the few fields the timeline needs.
 */
export async function readTimeline(
  db: Kysely<Database>,
  ref: { tenantId: string; sessionId: string; executionId: string; committedVersion: number },
): Promise<TimelineEvent[]> {
  const { rows } = await timelineRows(db, ref);
  return rows.filter((r) => r.execution_id === ref.executionId).map(fromRow);
}

function fromRow(r: Omit<TimelineRow, 'execution_id'>): TimelineEvent {
  return {
    type: r.type,
    recordedAt: new Date(r.recorded_at).getTime(),
    callId: r.call_id,
    attempt: r.attempt === null ? null : Number(r.attempt),
    stage: r.stage,
    runtime: r.type === 'runtime.output.produced@1' && r.plugin_id && r.runtime_id ? `${r.plugin_id}/${r.runtime_id}` : null,
  };
}

/** A stored event as `readTimeline` gives it (its JSON fields as `->>` reads them). */
export function timelineEvent(e: StoredEvent): TimelineEvent {
  const data = e.data as Record<string, unknown>;
  return fromRow({
    type: e.type,
    recorded_at: e.recordedAt,
    call_id: textOf(data.callId),
    attempt: textOf(data.attempt),
    stage: textOf(data.stage),
    plugin_id: textOf(data.pluginId),
    runtime_id: textOf(data.runtimeId),
  });
}

/** A JSON field as PostgreSQL's `->>` gives it for a string or a number (the fields read here), null when absent. */
export function textOf(value: unknown): string | null {
  if (value === undefined || value === null) return null;
  return typeof value === 'string' ? value : typeof value === 'object' ? JSON.stringify(value) : String(value);
}
