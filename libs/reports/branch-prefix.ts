import { type Kysely, sql } from 'kysely';
import { type Database, SessionBranchedV1 } from '../events';
import { comparePrefix, type FirstDifference } from './prefix-compare';
import { alignedTable, differenceText, type RecordedCall, TOKEN_ESTIMATE_NOTE } from './prefix-report';

/** Where a branch left its parent: its `session.branched@1`, and the parent's log position that put the branch turn in its history. */
export interface BranchPoint {
  branchSessionId: string;
  parentSessionId: string;
  atTurnId: string;
  parentVersion: number;
  /** The global position of the parent's event that made `atTurnId` the history's turn (its commit, selection or opening). */
  position: number;
}

/**
 * The branch point of `branchSessionId` (null: the session is not a branch): its first event, then
 * the parent's last event at or before `parentVersion` that put `atTurnId` in its history
 * (`turn.committed@1`, `turn.superseded@1` naming it, or `session.opened@1`). Two index reads.
 */
export async function readBranchPoint(db: Kysely<Database>, branchSessionId: string): Promise<BranchPoint | null> {
  const first = await db
    .selectFrom('events')
    .select(['type', 'data'])
    .where('stream_id', '=', branchSessionId)
    .where('stream_version', '=', 1)
    .executeTakeFirst();
  if (first?.type !== 'session.branched@1') return null;
  const branched = SessionBranchedV1.parse(first.data);
  const { rows } = await sql<{ position: string | null }>`
    select max(global_position) as position from events
    where stream_id = ${branched.parentSessionId} and stream_version <= ${branched.parentVersion}
      and ((type in ('turn.committed@1', 'session.opened@1') and data->>'turnId' = ${branched.atTurnId})
        or (type = 'turn.superseded@1' and data->>'byTurnId' = ${branched.atTurnId}))`.execute(db);
  return {
    branchSessionId,
    parentSessionId: branched.parentSessionId,
    atTurnId: branched.atTurnId,
    parentVersion: branched.parentVersion,
    position: Number(rows[0]?.position ?? 0),
  };
}

/** One runtime's first request in a branch, against what its parent sent at the same point. */
export interface BranchPrefixRow {
  runtime: string;
  branchTurnId: string;
  branchCallId: string;
  /**
   * `same-point`: the parent's first request of the runtime after the branch point (the turn the
   * parent played next: the branch's first request would equal it with the same input and replies);
   * `before-branch`: the parent played no such turn, its last turn's first request at or before the
   * point (what the provider's cache holds); null: the parent has no request of the runtime.
   */
  against: 'same-point' | 'before-branch' | null;
  parentTurnId: string | null;
  parentCallId: string | null;
  requestTokens: number;
  sharedTokens: number | null;
  /** The share of the parent's request the branch's repeats from its first byte. */
  sharedPercent: number | null;
  firstDifference: FirstDifference | null;
  /** Provider-reported (or emulated) cached input tokens of the branch's request. */
  providerCachedTokens: number | null;
}

/**
 * Per runtime, the branch's first request against the parent's at the same point (see
 * `BranchPrefixRow.against`). `branchCalls` and `parentCalls` in any order; `point.position` from
 * `readBranchPoint`.
 */
export function branchPrefixReport(args: {
  point: BranchPoint;
  branchCalls: readonly RecordedCall[];
  parentCalls: readonly RecordedCall[];
}): BranchPrefixRow[] {
  const byPosition = (calls: readonly RecordedCall[]) => [...calls].sort((a, b) => a.position - b.position);
  const runtimeOf = (c: RecordedCall) => `${c.pluginId}/${c.runtimeId}`;
  const parent = byPosition(args.parentCalls);
  // the first call of each (turn, runtime): the one a turn's prefix is measured on
  const turnFirsts = parent.filter((c, i) => parent.findIndex((o) => o.turnId === c.turnId && runtimeOf(o) === runtimeOf(c)) === i);
  const rows: BranchPrefixRow[] = [];
  const seen = new Set<string>();
  for (const call of byPosition(args.branchCalls)) {
    const runtime = runtimeOf(call);
    if (seen.has(runtime)) continue;
    seen.add(runtime);
    const mine = turnFirsts.filter((c) => runtimeOf(c) === runtime);
    const next = mine.find((c) => c.position > args.point.position);
    const before = [...mine].reverse().find((c) => c.position <= args.point.position);
    const against = next ?? before ?? null;
    const cmp = against ? comparePrefix(against, call) : null;
    rows.push({
      runtime,
      branchTurnId: call.turnId,
      branchCallId: call.callId,
      against: next ? 'same-point' : before ? 'before-branch' : null,
      parentTurnId: against?.turnId ?? null,
      parentCallId: against?.callId ?? null,
      requestTokens: cmp?.requestTokens ?? comparePrefix(call, call).requestTokens,
      sharedTokens: cmp?.sharedTokens ?? null,
      sharedPercent: cmp?.sharedPercent ?? null,
      firstDifference: cmp?.firstDifference ?? null,
      providerCachedTokens: call.cachedTokens ?? null,
    });
  }
  return rows;
}

/** The plain-text table of a branch's report. */
export function formatBranchPrefixTable(point: BranchPoint, rows: readonly BranchPrefixRow[]): string {
  const table = [['runtime', 'against parent', 'parent turn', 'req tok', 'shared', 'shared %', 'cached (provider)', 'first difference']];
  for (const r of rows) {
    const where = r.firstDifference ? differenceText(r.firstDifference) : r.sharedTokens === null ? '(no parent request)' : '(none: prefix intact)';
    table.push([
      r.runtime,
      r.against ?? '-',
      r.parentTurnId ?? '-',
      String(r.requestTokens),
      r.sharedTokens === null ? '-' : String(r.sharedTokens),
      r.sharedPercent === null ? '-' : `${r.sharedPercent}%`,
      r.providerCachedTokens === null ? '-' : String(r.providerCachedTokens),
      where,
    ]);
  }
  return [
    `branch ${point.branchSessionId} of session ${point.parentSessionId} at turn ${point.atTurnId}`,
    ...alignedTable(table),
    '',
    "shared %: the share of the parent's request the branch's first request repeats from its first byte.",
    TOKEN_ESTIMATE_NOTE,
  ].join('\n');
}
