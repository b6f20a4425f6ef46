import { EngineError } from '../../errors';
import { budgetTarget, estimateFixed, estimateMessage, inputLimit } from './estimate-request';
import { GroupPlan, runGroupSteps } from './group-steps';
import { replayLedger } from './ledger';
import { pruneHistory } from './prune-history';
import { slotTokens, type Slot } from './slots';
import { findToolGroups } from './tool-groups';
import { truncateToFit } from './truncate';
import type { BudgetLimits, BudgetMessage, BudgetOutcome, BudgetRequest, BudgetStats } from './types';

export { estimateRequest, inputLimit, limitProblems } from './estimate-request';

/** `kinds` does not run parallel to `messages`: a bug of the caller. */
export class BudgetKindsError extends EngineError {
  readonly code = 'BUDGET_KINDS_MISMATCH';
  readonly category = 'internal';
}

/**
 * Spec §5 "Budget": the messages one model call sends, within the input limit
 * (contextWindow − responseReserve). A pipeline, each step in its own module:
 * 1. estimate the request (`estimate-request`);
 * 2. replay the run's ledger, always, by content identity (`tool-groups`, `ledger`);
 * 3. over the input limit only: elide old tool results, then collapse old groups into frozen
 *    digests, oldest first, stopping at 70 % of the limit (`group-steps`, `elide`, `digest`);
 * 4. still over 70 %: prune `history` oldest first toward 70 % (`prune-history`);
 * 5. still over the limit: head/tail truncation of tool results and the summary envelope (`truncate`);
 * 6. still over: `overflow`, nothing to send.
 * Pure: the input is never mutated (changed messages are copies; unchanged ones are the same objects).
 */
export function applyBudget<M extends BudgetMessage>(req: BudgetRequest<M>): BudgetOutcome<M> {
  if (req.kinds.length !== req.messages.length) {
    throw new BudgetKindsError(`applyBudget: ${req.kinds.length} kinds for ${req.messages.length} messages`);
  }
  const { estimator, locale, limits } = req;
  const limit = inputLimit(limits);
  const target = budgetTarget(limit);
  const fixed = req.fixedTokens ?? estimateFixed(req, estimator);
  const original: Slot<M>[] = req.messages.map((message, i) => ({ message, kind: req.kinds[i]!, tokens: estimateMessage(message, estimator) }));
  const before = fixed + slotTokens(original);

  const groups = findToolGroups(req.messages, req.kinds);
  const plan = new GroupPlan(original, groups, replayLedger(groups, req.ledger), estimator, locale);
  let slots = plan.materialize();
  let total = fixed + slotTokens(slots);
  const stats: BudgetStats = { inputLimit: limit, before, after: total, elided: 0, collapsed: 0, pruned: 0, truncated: 0 };
  let ledger = req.ledger;

  if (total > limit) {
    const steps = runGroupSteps(plan, { total, target, mode: req.mode ?? 'normal' });
    if (steps.added.length > 0) ledger = { entries: [...req.ledger.entries, ...steps.added] };
    slots = plan.materialize();
    const pruned = pruneHistory({ slots, fixed, target, estimator, locale });
    const truncated = truncateToFit({ slots: pruned.slots, fixed, limit, estimator, locale });
    slots = truncated.slots;
    stats.pruned = pruned.pruned;
    stats.truncated = truncated.truncated;
    total = fixed + slotTokens(slots);
  }
  plan.decisions.forEach((d, i) => {
    if (d === 'elide') stats.elided += plan.elidedResults(i);
    if (d === 'collapse') stats.collapsed++;
  });
  stats.after = total;
  const base = { messages: slots.map((s) => s.message), kinds: slots.map((s) => s.kind), ledger, stats };
  return total <= limit ? { kind: 'fits', ...base } : { kind: 'overflow', text: overflowText(total, before, limits), ...base };
}

/** The context-overflow stop (English: it is the runtime's failure text, not prompt text). */
export function overflowText(estimate: number, before: number, limits: BudgetLimits): string {
  return (
    `context overflow: the request is estimated at ${estimate} input tokens after every budget step (${before} before), ` +
    `over the input limit of ${inputLimit(limits)} tokens (context window ${limits.contextWindow} − response reserve ${limits.responseReserve})`
  );
}
