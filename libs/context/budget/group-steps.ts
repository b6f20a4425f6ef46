import type { Locale } from '../../plugins-sdk';
import { frozenDigest } from './digest';
import { elideResult } from './elide';
import { estimateMessage } from './estimate-request';
import { groupCounts, ledgerEntry, type GroupDecision } from './ledger';
import { budgetSystemMessage, type Slot } from './slots';
import type { ToolGroup } from './tool-groups';
import type { BudgetMessage, BudgetMode, Estimator, LedgerEntry } from './types';

/** The request's tool groups with what the budget does to each: the ledger's decisions, then this request's. */
export class GroupPlan<M extends BudgetMessage> {
  readonly decisions: GroupDecision[];
  private readonly cache = new Map<string, Slot<M>[]>();

  constructor(
    private readonly slots: readonly Slot<M>[],
    readonly groups: readonly ToolGroup[],
    replayed: readonly GroupDecision[],
    private readonly estimator: Estimator,
    private readonly locale: Locale,
  ) {
    this.decisions = [...replayed];
  }

  /** The messages a group becomes under a decision (memoized: each is built once). */
  rendered(index: number, decision: GroupDecision): Slot<M>[] {
    const key = `${index}:${decision}`;
    let out = this.cache.get(key);
    if (!out) {
      out = this.render(this.groups[index]!, decision);
      this.cache.set(key, out);
    }
    return out;
  }

  tokens(index: number, decision: GroupDecision): number {
    return this.rendered(index, decision).reduce((n, s) => n + s.tokens, 0);
  }

  /** Tool results an elision changes in a group (0: eliding it would change nothing). */
  elidedResults(index: number): number {
    const original = this.slots.slice(this.groups[index]!.start + 1, this.groups[index]!.end);
    return this.rendered(index, 'elide').filter((s, n) => n > 0 && s.message !== original[n - 1]!.message).length;
  }

  /** The request's messages with every group as decided. */
  materialize(): Slot<M>[] {
    const out: Slot<M>[] = [];
    let next = 0;
    this.groups.forEach((g, i) => {
      out.push(...this.slots.slice(next, g.start), ...this.rendered(i, this.decisions[i]!));
      next = g.end;
    });
    out.push(...this.slots.slice(next));
    return out;
  }

  private render(group: ToolGroup, decision: GroupDecision): Slot<M>[] {
    const own = this.slots.slice(group.start, group.end);
    if (decision === 'keep') return own;
    if (decision === 'collapse') {
      const message = budgetSystemMessage<M>(frozenDigest(group.calls, this.locale));
      return [{ message, kind: 'loop', tokens: estimateMessage(message, this.estimator) }];
    }
    return own.map((slot, n) => {
      if (n === 0) return slot;
      const content = elideResult(slot.message.content, this.locale);
      if (content === slot.message.content) return slot;
      const message = { ...slot.message, content };
      return { message, kind: slot.kind, tokens: estimateMessage(message, this.estimator) };
    });
  }
}

export interface GroupStepsInput {
  /** The estimate with the plan as it is (ledger replayed). */
  total: number;
  target: number;
  mode: BudgetMode;
}

/**
 * The tool-group steps over the input limit (spec §5), oldest group first, stopping as soon as the
 * estimate is at most `target`: (a) elide the results of groups older than the newest two, (b) then
 * collapse groups older than the newest one into a frozen digest. `emergency` makes the newest
 * groups eligible too. Only a group whose identity is unique in the request is changed (a ledger
 * entry for an ambiguous one would be skipped on replay), and only when that makes it smaller.
 * Returns the new estimate and the ledger entries this request adds.
 */
export function runGroupSteps<M extends BudgetMessage>(plan: GroupPlan<M>, input: GroupStepsInput): { total: number; added: LedgerEntry[] } {
  const { groups, decisions } = plan;
  const counts = groupCounts(groups);
  const emergency = input.mode === 'emergency';
  const added: LedgerEntry[] = [];
  let total = input.total;
  const step = (lastEligible: number, to: Exclude<GroupDecision, 'keep'>): void => {
    for (let i = 0; i < lastEligible && total > input.target; i++) {
      const from = decisions[i]!;
      if (from !== 'keep' && (from === to || from === 'collapse')) continue;
      if (counts.get(groups[i]!.key) !== 1) continue;
      if (to === 'elide' && plan.elidedResults(i) === 0) continue;
      const delta = plan.tokens(i, to) - plan.tokens(i, from);
      if (delta >= 0) continue;
      decisions[i] = to;
      total += delta;
      added.push(ledgerEntry(to, groups[i]!));
    }
  };
  step(emergency ? groups.length : groups.length - 2, 'elide');
  step(emergency ? groups.length : groups.length - 1, 'collapse');
  return { total, added };
}
