import { estimateTokens } from '../estimate-tokens';
import type { BudgetLimits, BudgetMessage, BudgetOutcome, BudgetRequest, Estimator } from './types';

/** Tokens counted per attached image (spec §1 "Images", §5). */
const IMAGE_TOKENS = 1_500;

/** The input limit of a model: context window − response reserve. */
export function inputLimit(limits: BudgetLimits): number {
  return limits.contextWindow - limits.responseReserve;
}

/** Problems of token limits (a configuration error at start-up); empty when valid. */
export function limitProblems(limits: BudgetLimits): string[] {
  const problems: string[] = [];
  if (!Number.isInteger(limits.contextWindow) || limits.contextWindow <= 0) problems.push('contextWindow must be a positive integer');
  if (!Number.isInteger(limits.responseReserve) || limits.responseReserve <= 0) problems.push('the response reserve must be a positive integer');
  if (problems.length === 0 && limits.responseReserve >= limits.contextWindow) problems.push('the response reserve must be smaller than contextWindow');
  return problems;
}

/** Estimated input tokens of a request: messages, tool definitions, the response schema twice. SEAM: the budget part refines it. */
export function estimateRequest<M extends BudgetMessage>(
  req: Pick<BudgetRequest<M>, 'messages' | 'tools' | 'responseSchema'> & { estimator?: Estimator },
): number {
  const est = req.estimator ?? estimateTokens;
  let total = 0;
  for (const m of req.messages) {
    total += est(m.content) + (m.images?.length ?? 0) * IMAGE_TOKENS;
    for (const c of m.toolCalls ?? []) total += est(c.name) + est(JSON.stringify(c.arguments));
    if (m.thinking) total += est(m.thinking.text);
  }
  for (const t of req.tools ?? []) total += est(JSON.stringify(t));
  if (req.responseSchema) total += 2 * est(JSON.stringify(req.responseSchema));
  return total;
}

/**
 * Spec §5: applies the budget to one request. SEAM: this stub only measures; the budget part
 * implements the ledger replay, elision, collapse, history pruning, head/tail truncation and the
 * overflow stop behind this signature.
 */
export function applyBudget<M extends BudgetMessage>(req: BudgetRequest<M>): BudgetOutcome<M> {
  const limit = inputLimit(req.limits);
  const before = estimateRequest(req);
  const stats = { inputLimit: limit, before, after: before, elided: 0, collapsed: 0, pruned: 0, truncated: 0 };
  const base = { messages: [...req.messages], kinds: [...req.kinds], ledger: req.ledger, stats };
  return before <= limit ? { kind: 'fits', ...base } : { kind: 'overflow', text: `context overflow: ${before} > ${limit}`, ...base };
}
