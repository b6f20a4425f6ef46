import type { Locale } from '../../../libs/plugins-sdk';

/** Marks a summary cut inside a sentence (a cut between sentences needs none). */
export const CUT_MARK = '…';

export interface Fitted {
  readonly text: string;
  /** The text was shortened to fit the budget. */
  readonly truncated: boolean;
}

/** The largest `n` in [0, count] with `fits(n)` (`fits` is monotonic: true up to some `n`, then false). */
function largest(count: number, fits: (n: number) => boolean): number {
  let low = 0;
  let high = count;
  while (low < high) {
    const mid = Math.ceil((low + high) / 2);
    if (fits(mid)) low = mid;
    else high = mid - 1;
  }
  return low;
}

const segments = (text: string, granularity: 'sentence' | 'grapheme', locale: Locale) =>
  Array.from(new Intl.Segmenter(locale, { granularity }).segment(text), (s) => s.segment);

/** A heading line (`## Open threads`), as the templates ask for them. */
const HEADING = /^#{1,6}[ \t]+(.+?)[ \t#]*$/gm;
/** A cut that ends on headings leaves them out (a section with nothing under it). */
const withoutTrailingHeadings = (text: string) => text.replace(/(?:\n?^#{1,6}[ \t][^\n]*$)+(?![\s\S])/m, '').trimEnd();

/**
 * A complete summary the model wrote longer than its budget (by the framework's estimate),
 * shortened to fit: whole sentences from the start (Unicode sentence boundaries) when they keep at
 * least half the budget, else whole graphemes followed by `…`. Never cut inside a code point or a
 * grapheme cluster. A text that fits comes back as it is.
 */
export function fitToBudget(text: string, budget: number, estimate: (text: string) => number, locale: Locale): Fitted {
  if (estimate(text) <= budget) return { text, truncated: false };
  const prefix = (parts: readonly string[], n: number) => parts.slice(0, n).join('').trimEnd();
  const sentences = segments(text, 'sentence', locale);
  const whole = withoutTrailingHeadings(
    prefix(
      sentences,
      largest(sentences.length, (n) => estimate(prefix(sentences, n)) <= budget),
    ),
  );
  if (whole && estimate(whole) * 2 >= budget) return { text: whole, truncated: true };
  const graphemes = segments(text, 'grapheme', locale);
  const head = prefix(
    graphemes,
    largest(graphemes.length, (n) => estimate(`${prefix(graphemes, n)}${CUT_MARK}`) <= budget),
  );
  return { text: head ? `${head}${CUT_MARK}` : '', truncated: true };
}

/** The section headings a summary has (`## Characters`), in order: its `focusSections`. */
export function focusSections(summary: string): string[] {
  return Array.from(summary.matchAll(HEADING), (m) => m[1]);
}
