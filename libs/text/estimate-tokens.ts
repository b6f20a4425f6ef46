/**
 * The spec's estimate of a prompt's tokens (spec §5 "Measuring the prefix"): about one token per
 * CJK character, one per four other characters. The one estimate: the budget, the compaction
 * barrier, the prefix report, the plugins (through the SDK) and the offline emulator's cache
 * figures all count with it, so a bound and a share are in the same unit.
 *
 * Counted per code point, never per UTF-16 unit: a surrogate pair is one character (an astral
 * ideograph such as 𠮷 is one CJK character, an emoji one other character), a lone surrogate one
 * other character. An emoji ZWJ sequence counts each of its code points (a tokenizer reads them
 * one by one too), so 👨‍👩‍👧 is five other characters. One pass over the UTF-16 units, no
 * per-character regex or string: requests of hundreds of thousands of characters are estimated on
 * every turn.
 */
export function estimateTokens(text: string): number {
  return tokensOfTally(tallyTokens(text));
}

/**
 * What the estimate counts in a text: its CJK and other code points, and its first and last UTF-16
 * units (-1: empty), so that tallies of parts join into the tally of the parts' concatenation
 * without scanning it again (`joinTallies`).
 */
export interface TokenTally {
  readonly cjk: number;
  readonly other: number;
  readonly first: number;
  readonly last: number;
}

/** `estimateTokens` of the text a tally is of. */
export function tokensOfTally(tally: TokenTally): number {
  return tally.cjk + Math.ceil(tally.other / 4);
}

/** The tally of a text (see `estimateTokens`). */
export function tallyTokens(text: string): TokenTally {
  let cjk = 0;
  let other = 0;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    let c = text.charCodeAt(i);
    // a high surrogate followed by a low one: one code point, its second unit is not counted again
    if (isHighSurrogate(c) && i + 1 < n) {
      const d = text.charCodeAt(i + 1);
      if (isLowSurrogate(d)) {
        c = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00);
        i++;
      }
    }
    if (isCjkCodePoint(c)) cjk++;
    else other++;
  }
  return { cjk, other, first: n ? text.charCodeAt(0) : -1, last: n ? text.charCodeAt(n - 1) : -1 };
}

/**
 * The tally of the concatenation of the texts `tallies` are of, in order: their counts added, but a
 * high surrogate ending one text and a low one starting the next (each a lone surrogate there,
 * counted as one other character) are one code point of the concatenation.
 */
export function joinTallies(tallies: readonly TokenTally[]): TokenTally {
  let cjk = 0;
  let other = 0;
  let first = -1;
  let last = -1;
  for (const t of tallies) {
    if (t.first === -1) continue;
    cjk += t.cjk;
    other += t.other;
    if (isHighSurrogate(last) && isLowSurrogate(t.first)) {
      other -= 2;
      if (isCjkCodePoint(0x10000 + ((last - 0xd800) << 10) + (t.first - 0xdc00))) cjk++;
      else other++;
    }
    if (first === -1) first = t.first;
    last = t.last;
  }
  return { cjk, other, first, last };
}

const isHighSurrogate = (c: number) => c >= 0xd800 && c <= 0xdbff;
const isLowSurrogate = (c: number) => c >= 0xdc00 && c <= 0xdfff;

/**
 * A CJK character for the estimate: every code point of the Han, Hiragana, Katakana, Hangul and
 * Bopomofo scripts, the CJK punctuation and symbol blocks between them, and the halfwidth and
 * fullwidth forms (`，`, `！`, `Ａ`).
 */
export function isCjkCodePoint(c: number): boolean {
  if (c < 0x3000) return c === 0x02ea || c === 0x02eb || (c >= 0x1100 && c <= 0x11ff) || (c >= 0x2e80 && c <= 0x2fff);
  if (c <= 0xffff)
    return (
      c <= 0x9fff || // CJK symbols and punctuation, kana, Bopomofo, compatibility Jamo, enclosed CJK, Ext A, unified ideographs
      (c >= 0xa960 && c <= 0xa97f) || // Hangul Jamo Extended-A
      (c >= 0xac00 && c <= 0xd7ff) || // Hangul syllables, Jamo Extended-B
      (c >= 0xf900 && c <= 0xfaff) || // CJK compatibility ideographs
      (c >= 0xfe30 && c <= 0xfe4f) || // CJK compatibility forms (vertical punctuation)
      (c >= 0xff00 && c <= 0xffef) // halfwidth and fullwidth forms
    );
  return (
    (c >= 0x16fe0 && c <= 0x16fff) || // ideographic symbols and punctuation
    (c >= 0x1aff0 && c <= 0x1b16f) || // kana extensions and supplement
    (c >= 0x1f200 && c <= 0x1f2ff) || // enclosed ideographic supplement (🈀, 🈚)
    (c >= 0x20000 && c <= 0x3ffff) // CJK extensions B to J, compatibility supplement (planes 2 and 3)
  );
}
