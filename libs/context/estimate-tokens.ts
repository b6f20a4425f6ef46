/**
 * Spec §5 "Measuring the prefix": about one token per CJK character, one per four other characters.
 * Counted per code point (a surrogate pair is one other character; a lone surrogate is one too), with
 * CJK the code points U+3000–U+9FFF, U+AC00–U+D7AF, U+F900–U+FAFF and U+FF00–U+FFEF. One pass over
 * the UTF-16 code units, no per-character regex or string: the compaction barrier and the budget
 * estimate whole requests (hundreds of thousands of characters) on every turn.
 */
export function estimateTokens(text: string): number {
  let cjk = 0;
  let other = 0;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if ((c >= 0x3000 && c <= 0x9fff) || (c >= 0xac00 && c <= 0xd7af) || (c >= 0xf900 && c <= 0xfaff) || (c >= 0xff00 && c <= 0xffef)) {
      cjk++;
      continue;
    }
    other++;
    // a high surrogate followed by a low one: one code point, its second unit is not counted again
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < n) {
      const d = text.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) i++;
    }
  }
  return cjk + Math.ceil(other / 4);
}
