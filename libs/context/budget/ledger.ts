import { callsKey, type ToolGroup } from './tool-groups';
import type { BudgetLedger, LedgerEntry } from './types';

/** What the budget does to one tool group (a collapse supersedes an elision). */
export type GroupDecision = 'keep' | 'elide' | 'collapse';

const RANK: Record<GroupDecision, number> = { keep: 0, elide: 1, collapse: 2 };

export function strongerDecision(a: GroupDecision, b: GroupDecision): GroupDecision {
  return RANK[a] >= RANK[b] ? a : b;
}

/** How many groups of the request carry each identity: only an identity found exactly once is acted on. */
export function groupCounts(groups: readonly ToolGroup[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const g of groups) counts.set(g.key, (counts.get(g.key) ?? 0) + 1);
  return counts;
}

/**
 * Replays the ledger on the request's groups: each entry applies to the one group with the same
 * content (ids, names, arguments, results), wherever it is. An entry whose group is missing (a hook
 * removed or rewrote it) or ambiguous (found more than once) is skipped, never applied to another
 * call that reuses an id. Returns a decision per group, parallel to `groups`.
 */
export function replayLedger(groups: readonly ToolGroup[], ledger: BudgetLedger): GroupDecision[] {
  const counts = groupCounts(groups);
  const byKey = new Map<string, GroupDecision>();
  for (const entry of ledger.entries) {
    const key = callsKey(entry.calls);
    if (counts.get(key) !== 1) continue;
    byKey.set(key, strongerDecision(byKey.get(key) ?? 'keep', entry.kind));
  }
  return groups.map((g) => byKey.get(g.key) ?? 'keep');
}

/** A new ledger entry for a group (its calls copied, so the ledger shares nothing with the request). */
export function ledgerEntry(kind: LedgerEntry['kind'], group: ToolGroup): LedgerEntry {
  return { kind, calls: group.calls.map((c) => ({ ...c })) };
}
