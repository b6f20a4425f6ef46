import type { CompactionContext, CompactSegment } from '../../../libs/plugins-sdk';
import type { SummaryRequestText } from './templates';
import { fitToBudget, focusSections } from './shorten';

/**
 * The model may write a quarter more than the budget it is asked for: a summary that runs a little
 * long then completes and is shortened here (`truncated`), instead of being cut by the model.
 */
export const outputAllowance = (budget: number) => budget + Math.ceil(budget / 4);

/** A summary this plugin can use, before it is placed in a segment. */
export type Summary = Pick<CompactSegment, 'content' | 'focusSections' | 'truncated'>;

/**
 * One summary call and at most one retry:
 * - a reply that ended on `length` (cut by the model's output limit) is never used: the call is
 *   made once more asking for half the length, with the same output limit; a second cut reply (or
 *   any reply that did not end with `stop`, or an empty one) gives no summary;
 * - a complete reply longer than `budget` is shortened to fit it and marked `truncated`.
 */
export async function summarize(ctx: CompactionContext, request: (targetTokens: number) => SummaryRequestText, budget: number): Promise<Summary | null> {
  const maxOutputTokens = outputAllowance(budget);
  for (const target of [budget, Math.max(1, Math.floor(budget / 2))]) {
    const reply = await ctx.summaryModel.complete({ ...request(target), maxOutputTokens });
    if (reply.finishReason === 'length') continue;
    if (reply.finishReason !== 'stop') return null;
    const fitted = fitToBudget(reply.text.trim(), budget, (t) => ctx.estimateTokens(t), ctx.locale);
    if (!fitted.text) return null;
    return { content: fitted.text, focusSections: focusSections(fitted.text), ...(fitted.truncated ? { truncated: true } : {}) };
  }
  return null;
}
