import type { CompactInput, CompactionContext, CompactResult, CompactSegment, PromptLoader } from '../../../libs/plugins-sdk';
import { newSegmentBudget, segmentCap, totalBudget } from './budget';
import { planMerge } from './merge';
import { protectedStart } from './protect';
import { selectPrefix } from './select-prefix';
import { summarize } from './summarize';
import { renderMessage, renderSummary, SummaryTemplates, type SummaryRequestText } from './templates';

const NOTHING: CompactResult = { summaries: [] };

/**
 * The default `history.compact@2` strategy (spec §1 "History compaction"). The framework has
 * decided that compaction is needed; this decides what to summarize:
 *
 * 1. The last two user turns and the last five messages are protected (whichever protects more).
 * 2. Of the rest, the longest continuous prefix the fast model can read (its input capacity minus
 *    the summary request's own text), ending on a turn boundary; a message too large for the fast
 *    model on its own stays uncompacted, and so does everything after it (see `selectPrefix`).
 * 3. That prefix gets one new segment of its own, written first (budget: 25 % of its estimate,
 *    within [128, min(4 % of the effective window, 2,048)]; at most half the total while old
 *    segments exist, so that a merge always has room).
 * 4. By the length actually written, the oldest continuous segments are merged into one only when
 *    the total budget (12 % of the effective window, within [128, min(8,192, window)]) or the cap
 *    of eight segments requires it; the segments kept are not returned (they stay as saved).
 *
 * A summary call cut by the model's output limit is never used (see `summarize`); when the new
 * segment or a required merge cannot be written, nothing is returned and the history stays as it is.
 */
export async function compactHistory(input: CompactInput, ctx: CompactionContext, prompts: PromptLoader): Promise<CompactResult> {
  const { effective, fastInput } = input.windows;
  const templates = new SummaryTemplates(prompts, ctx.locale);
  const total = totalBudget(effective);
  const cap = segmentCap(effective);
  if (total < 1) return NOTHING; // no window, no room for any summary
  const escape = (text: string) => ctx.sdk.escapeXml(text);
  const requestTokens = (r: SummaryRequestText) => ctx.estimateTokens(r.system) + ctx.estimateTokens(r.prompt);

  // the summary request's own text, with the longest length instruction it can carry
  const overhead = requestTokens(templates.segment('', cap));
  const prefix = selectPrefix(input.messages, protectedStart(input.messages), fastInput - overhead, (m) => ctx.estimateTokens(renderMessage(m, escape)));
  if (prefix.messages.length === 0) return NOTHING;

  const history = prefix.messages.map((m) => renderMessage(m, escape)).join('');
  const sourceTokens = prefix.messages.reduce((n, m) => n + ctx.estimateTokens(m.text), 0);
  const budget = newSegmentBudget(sourceTokens, effective, input.summaries.length > 0);
  const written = await summarize(ctx, (target) => templates.segment(history, target), budget);
  if (!written) return NOTHING;
  const segment: CompactSegment = { messageIds: prefix.messages.map((m) => m.messageId), replacesSummaryIds: [], ...written };

  const plan = planMerge(
    input.summaries.map((s) => ctx.estimateTokens(s.content)),
    ctx.estimateTokens(segment.content),
    { total, cap },
  );
  if (!plan) return NOTHING;
  if (plan.kind === 'keep') return { summaries: [segment] };

  const replaced = input.summaries.slice(0, plan.count);
  const sources = replaced.map((s) => renderSummary(s.content, escape)).join('');
  if (requestTokens(templates.merge(sources, plan.budget)) > fastInput) return NOTHING;
  const merged = await summarize(ctx, (target) => templates.merge(sources, target), plan.budget);
  if (!merged) return NOTHING;
  return { summaries: [{ messageIds: [], replacesSummaryIds: replaced.map((s) => s.summaryId), ...merged }, segment] };
}
