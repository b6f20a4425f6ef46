import { fixedText } from '../fixed-text';
import type { Locale } from '../../plugins-sdk';
import { advanceCodePoints, codePointLength, graphemeEnd, graphemeStart, retreatCodePoints } from '../../text';
import { estimateMessage } from './estimate-request';
import { slotTokens, type Slot } from './slots';
import type { BudgetMessage, Estimator } from './types';

/**
 * `text` cut to its head and tail around `marker`, keeping at most `keep` code points of it (the
 * head gets the odd one). Cuts land on grapheme boundaries, so no surrogate pair, ZWJ emoji
 * sequence, flag or combining sequence is split (a cluster a cut would split is left out).
 */
export function truncateMiddle(text: string, keep: number, marker: string): string {
  const length = codePointLength(text);
  if (keep >= length) return text;
  const headCount = Math.ceil(Math.max(0, keep) / 2);
  const tailCount = Math.max(0, keep) - headCount;
  const headEnd = graphemeStart(text, advanceCodePoints(text, 0, headCount));
  const tailStart = Math.max(headEnd, graphemeEnd(text, retreatCodePoints(text, text.length, tailCount)));
  return `${text.slice(0, headEnd)}\n${marker}\n${text.slice(tailStart)}`;
}

export interface TruncateInput<M extends BudgetMessage> {
  slots: readonly Slot<M>[];
  fixed: number;
  /** Truncate just enough for the estimate to be at most this (the input limit). */
  limit: number;
  estimator: Estimator;
  locale: Locale;
}

/**
 * Head/tail truncation (spec §5, the last step): tool results (of `loop` and `history` messages)
 * and the compacted-history envelope (`summary`) keep a head and a tail with the localized marker
 * between them, just enough for the request to fit the input limit. The largest candidate goes
 * first (ties: the older), so as few messages change as possible; each keeps as much as still fits.
 */
export function truncateToFit<M extends BudgetMessage>(input: TruncateInput<M>): { slots: Slot<M>[]; truncated: number } {
  const slots = [...input.slots];
  let total = input.fixed + slotTokens(slots);
  const marker = fixedText(input.locale).budgetTruncated;
  const candidates = slots
    .map((slot, i) => ({ slot, i }))
    .filter(({ slot }) => slot.kind === 'summary' || (slot.message.role === 'tool' && (slot.kind === 'loop' || slot.kind === 'history')))
    .sort((a, b) => b.slot.tokens - a.slot.tokens || a.i - b.i);
  let truncated = 0;
  for (const { slot, i } of candidates) {
    if (total <= input.limit) break;
    const allowed = slot.tokens - (total - input.limit);
    const cut = largestFit(slot.message, allowed, marker, input.estimator) ?? smallest(slot.message, marker, input.estimator);
    if (cut === null || cut.tokens >= slot.tokens) continue;
    slots[i] = { message: { ...slot.message, content: cut.content }, kind: slot.kind, tokens: cut.tokens };
    total += cut.tokens - slot.tokens;
    truncated++;
  }
  return { slots, truncated };
}

type Cut = { content: string; tokens: number };

function cutAt(message: BudgetMessage, keep: number, marker: string, estimator: Estimator): Cut {
  const content = truncateMiddle(message.content, keep, marker);
  return { content, tokens: estimateMessage({ ...message, content }, estimator) };
}

/** The cut that keeps the most code points and still fits `allowed` tokens (binary search), or null. */
function largestFit(message: BudgetMessage, allowed: number, marker: string, estimator: Estimator): Cut | null {
  let lo = 0;
  let hi = codePointLength(message.content) - 1;
  let best: Cut | null = null;
  while (lo <= hi) {
    const mid = Math.floor((lo + hi) / 2);
    const cut = cutAt(message, mid, marker, estimator);
    if (cut.tokens <= allowed) {
      best = cut;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  return best;
}

/** When nothing fits: the marker alone, if that is still smaller. */
function smallest(message: BudgetMessage, marker: string, estimator: Estimator): Cut | null {
  return codePointLength(message.content) > 0 ? cutAt(message, 0, marker, estimator) : null;
}
