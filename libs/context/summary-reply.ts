import type { SummaryModel, SummaryReply } from '../plugins-sdk';

/**
 * Safeguard 2 of spec §1 "History compaction": a summary reply that ended on the output limit
 * (`length` / `max_tokens`) was cut mid-text, so its text is never used: null. Any other reply's
 * text is accepted (a summary the provider shortened on purpose is whole, and marked `truncated`).
 */
export function acceptedSummaryReply(reply: SummaryReply): string | null {
  return reply.finishReason === 'length' ? null : reply.text;
}

/**
 * The summary model as the compaction provider gets it: a cut reply reaches the provider with its
 * text discarded (empty, `finishReason: 'length'`), so no part of it can become a saved summary
 * (a segment's content is never empty); the provider may ask again with more room, or leave it.
 */
export function discardingCutReplies(model: SummaryModel): SummaryModel {
  return {
    async complete(request) {
      const reply = await model.complete(request);
      return acceptedSummaryReply(reply) === null ? { text: '', finishReason: 'length' } : reply;
    },
  };
}
