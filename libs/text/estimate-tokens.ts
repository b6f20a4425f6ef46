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
  let cjk = 0;
  let other = 0;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    let c = text.charCodeAt(i);
    // a high surrogate followed by a low one: one code point, its second unit is not counted again
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < n) {
      const d = text.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        c = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00);
        i++;
      }
    }
    if (isCjkCodePoint(c)) cjk++;
    else other++;
  }
  return cjk + Math.ceil(other / 4);
}

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
