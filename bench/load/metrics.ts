/**
 * Pure figures of a load run: percentiles, throughput against the ideal, and the exactly-once check
 * of the event log and `turn_messages`. No I/O here (tested in test/unit/bench-load-metrics.test.ts).
 */

/** The p-th percentile (0..100) by linear interpolation between the closest ranks; null for no values. */
export function percentile(values: readonly number[], p: number): number | null {
  if (values.length === 0) return null;
  if (p < 0 || p > 100) throw new RangeError(`percentile ${p} is outside 0..100`);
  const sorted = [...values].sort((a, b) => a - b);
  const rank = (p / 100) * (sorted.length - 1);
  const low = Math.floor(rank);
  const high = Math.ceil(rank);
  return sorted[low] + (sorted[high] - sorted[low]) * (rank - low);
}

export interface Spread {
  p50: number | null;
  p95: number | null;
  max: number | null;
}

export function spread(values: readonly number[]): Spread {
  return { p50: percentile(values, 50), p95: percentile(values, 95), max: values.length ? Math.max(...values) : null };
}

/** Each value minus the model's latency: what the engine itself adds to a turn. */
export function overheads(latenciesMs: readonly number[], modelLatencyMs: number): number[] {
  return latenciesMs.map((ms) => ms - modelLatencyMs);
}

/** Workers × concurrency ÷ model latency in seconds: turns/s if every slot always waited on the model. Null for a 0 ms model. */
export function idealThroughput(options: { workers: number; concurrency: number; modelLatencyMs: number }): number | null {
  if (options.modelLatencyMs <= 0) return null;
  return (options.workers * options.concurrency) / (options.modelLatencyMs / 1000);
}

export function throughput(turns: number, windowMs: number): number {
  return windowMs > 0 ? turns / (windowMs / 1000) : 0;
}

/** Throughput as a percentage of the ideal; null when there is no ideal. */
export function efficiencyPercent(turnsPerSecond: number, ideal: number | null): number | null {
  return ideal === null || ideal === 0 ? null : (turnsPerSecond / ideal) * 100;
}

/** What one session's client submitted, and what the log and `turn_messages` hold for it. */
export interface SessionLog {
  sessionId: string;
  /** In the order the client submitted them. */
  submitted: { executionId: string; turnId: string }[];
  /** Every `turn.committed` event of the session, in stream order. */
  commits: { executionId: string; turnId: string; messageCount: number }[];
  /** Execution ids of every `execution.failed` event of the session. */
  failures: string[];
  /** The session's `turn_messages` rows, in `ord` order. */
  messages: { turnId: string; messageId: string }[];
}

export interface ExactlyOnce {
  /** Submitted executions with a `turn.committed` event. */
  committed: number;
  /** Submitted executions that failed and never committed. */
  failed: number;
  /** Submitted executions with neither (lost). */
  missing: number;
  /** `turn.committed` events beyond the first per execution, plus `turn_messages` rows beyond what a turn's commit holds. */
  duplicated: number;
  /** Turns whose place among the session's commits, or among its `turn_messages`, differs from the order they were submitted in. */
  outOfOrder: number;
}

/** The exactly-once and in-order check over every session of a run. */
export function checkExactlyOnce(sessions: readonly SessionLog[]): ExactlyOnce {
  const total: ExactlyOnce = { committed: 0, failed: 0, missing: 0, duplicated: 0, outOfOrder: 0 };
  for (const s of sessions) {
    const one = checkSession(s);
    for (const key of Object.keys(total) as (keyof ExactlyOnce)[]) total[key] += one[key];
  }
  return total;
}

export function checkSession(s: SessionLog): ExactlyOnce {
  const commitsOf = countBy(s.commits.map((c) => c.executionId));
  const failed = new Set(s.failures);
  let committed = 0;
  let failedCount = 0;
  let missing = 0;
  let duplicated = 0;
  for (const { executionId } of s.submitted) {
    const n = commitsOf.get(executionId) ?? 0;
    if (n > 0) committed++;
    else if (failed.has(executionId)) failedCount++;
    else missing++;
    duplicated += Math.max(0, n - 1);
  }
  // each turn's rows: as many as its first commit carried, no more
  const firstCommitOfTurn = new Map<string, number>();
  for (const c of s.commits) if (!firstCommitOfTurn.has(c.turnId)) firstCommitOfTurn.set(c.turnId, c.messageCount);
  const rowsOfTurn = countBy(s.messages.map((m) => m.turnId));
  for (const [turnId, rows] of rowsOfTurn) duplicated += Math.max(0, rows - (firstCommitOfTurn.get(turnId) ?? 0));
  duplicated += [...countBy(s.messages.map((m) => m.messageId)).values()].reduce((sum, n) => sum + n - 1, 0);

  const committedIds = new Set(s.commits.map((c) => c.executionId));
  const expectedExecutions = s.submitted.filter((x) => committedIds.has(x.executionId)).map((x) => x.executionId);
  const submittedIds = new Set(s.submitted.map((x) => x.executionId));
  const commitOrder = unique(s.commits.map((c) => c.executionId)).filter((id) => submittedIds.has(id));
  const expectedTurns = s.submitted.filter((x) => committedIds.has(x.executionId)).map((x) => x.turnId);
  const submittedTurns = new Set(s.submitted.map((x) => x.turnId));
  const messageOrder = unique(s.messages.map((m) => m.turnId)).filter((id) => submittedTurns.has(id));
  const outOfOrder = Math.max(misplaced(commitOrder, expectedExecutions), misplaced(messageOrder, expectedTurns));
  return { committed, failed: failedCount, missing, duplicated, outOfOrder };
}

/** How many places of `actual` hold something else than `expected` does there (a missing tail counts). */
export function misplaced(actual: readonly string[], expected: readonly string[]): number {
  let n = 0;
  for (let i = 0; i < Math.max(actual.length, expected.length); i++) if (actual[i] !== expected[i]) n++;
  return n;
}

function countBy(values: readonly string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const v of values) counts.set(v, (counts.get(v) ?? 0) + 1);
  return counts;
}

function unique(values: readonly string[]): string[] {
  return [...new Set(values)];
}
