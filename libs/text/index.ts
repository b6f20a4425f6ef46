/**
 * Cutting text people (or models) wrote without breaking it: every cut lands on a grapheme-cluster
 * boundary (Unicode extended grapheme clusters, `Intl.Segmenter`), so it never splits a surrogate
 * pair (a lone surrogate is not valid Unicode: PostgreSQL's jsonb rejects it), an emoji ZWJ
 * sequence, a flag, or a letter from its combining marks. Lengths are counted in code points.
 * Offsets in and out are UTF-16 indexes, as JavaScript strings use them. Pure, no dependencies.
 */

/**
 * The grapheme segmenter, made at its first use: the first one a process makes costs ~15 ms of CPU
 * (ICU's break rules), and most processes that load this (every engine) may never cut a non-ASCII text.
 */
let made: Intl.Segmenter | undefined;
const segmenter = (): Intl.Segmenter => (made ??= new Intl.Segmenter('und', { granularity: 'grapheme' }));

/**
 * Whether `index` (inside the text) is a boundary by its two neighbours alone: between two ASCII
 * characters there is always one, but in CR LF (UAX #29: no ASCII character is Extend, ZWJ,
 * SpacingMark, Prepend, a regional indicator or Hangul). Answered without the segmenter, which
 * copies the whole text for each question (issue 33: the prefix report asks it a few times per
 * request of tens of thousands of characters).
 */
const asciiBoundary = (text: string, index: number): boolean => {
  const before = text.charCodeAt(index - 1);
  const after = text.charCodeAt(index);
  return before < 0x80 && after < 0x80 && !(before === 0x0d && after === 0x0a);
};

/** The grapheme boundary at or before `index` (the start of the cluster that holds it). */
export function graphemeStart(text: string, index: number): number {
  if (index <= 0) return 0;
  if (index >= text.length) return text.length;
  if (asciiBoundary(text, index)) return index;
  return segmenter().segment(text).containing(index)!.index;
}

/** The grapheme boundary at or after `index` (the end of the cluster that holds it). */
export function graphemeEnd(text: string, index: number): number {
  if (index <= 0) return 0;
  if (index >= text.length) return text.length;
  if (asciiBoundary(text, index)) return index;
  const cluster = segmenter().segment(text).containing(index)!;
  return cluster.index === index ? index : cluster.index + cluster.segment.length;
}

/** UTF-16 index `count` code points after `from` (or the end). */
export function advanceCodePoints(text: string, from: number, count: number): number {
  let i = Math.max(0, from);
  for (let n = 0; n < count && i < text.length; n++) i += isHigh(text.charCodeAt(i)) && isLow(text.charCodeAt(i + 1)) ? 2 : 1;
  return Math.min(i, text.length);
}

/** UTF-16 index `count` code points before `from` (or 0). */
export function retreatCodePoints(text: string, from: number, count: number): number {
  let i = Math.min(from, text.length);
  for (let n = 0; n < count && i > 0; n++) i -= isLow(text.charCodeAt(i - 1)) && isHigh(text.charCodeAt(i - 2)) ? 2 : 1;
  return Math.max(i, 0);
}

/** Number of code points (a surrogate pair counts once). */
export function codePointLength(text: string): number {
  // the UTF-16 length less one for each well-formed pair (a lone surrogate counts as one)
  let pairs = 0;
  for (let i = 0; i < text.length - 1; i++) {
    if (isHigh(text.charCodeAt(i)) && isLow(text.charCodeAt(i + 1))) {
      pairs++;
      i++;
    }
  }
  return text.length - pairs;
}

/** The longest prefix of at most `maxCodePoints` code points that ends on a grapheme boundary. */
export function truncateText(text: string, maxCodePoints: number): string {
  const cut = advanceCodePoints(text, 0, Math.max(0, maxCodePoints));
  return cut >= text.length ? text : text.slice(0, graphemeStart(text, cut));
}

/**
 * The text around `offset`: at most `radius` code points on each side, in whole grapheme
 * clusters (a cluster the radius would cut is left out). `offset` is first moved back to the start
 * of the cluster that holds it.
 */
export function sliceAround(text: string, offset: number, radius: number): string {
  const { start, end } = windowAround(text, offset, radius);
  return text.slice(start, end);
}

/** The UTF-16 range `sliceAround` cuts. */
export function windowAround(text: string, offset: number, radius: number): { start: number; end: number } {
  const at = graphemeStart(text, offset);
  return { start: graphemeEnd(text, retreatCodePoints(text, at, radius)), end: graphemeStart(text, advanceCodePoints(text, at, radius)) };
}

/**
 * Length (UTF-16) of the longest common prefix of `a` and `b` that ends on a grapheme boundary of
 * both: where the first difference is, as a reader sees it.
 */
export function commonGraphemePrefix(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  let k = 0;
  while (k < n && a.charCodeAt(k) === b.charCodeAt(k)) k++;
  for (;;) {
    const back = Math.min(graphemeStart(a, k), graphemeStart(b, k));
    if (back === k) return k;
    k = back;
  }
}

/** True when the string has no lone surrogate (String.prototype.isWellFormed, ES2024). */
export function isWellFormedText(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (isHigh(c)) {
      if (!isLow(text.charCodeAt(i + 1))) return false;
      i++;
    } else if (isLow(c)) return false;
  }
  return true;
}

/** A lone surrogate (a high one not followed by a low one, or a low one not preceded by a high one). */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/** Text well-formed: each lone surrogate becomes U+FFFD. */
export function wellFormedText(text: string): string {
  return text.replace(LONE_SURROGATE, '\uFFFD');
}

/**
 * Text as PostgreSQL text and jsonb can hold it: they refuse U+0000 and lone surrogates (the JSON
 * escape of one included), so each becomes U+FFFD. For text the engine reports or takes from a
 * model, never for content a plugin or a player gave (that is refused instead).
 */
export function recordableText(text: string): string {
  return wellFormedText(text).replaceAll('\u0000', '\uFFFD');
}

/**
 * A dotted path (`characters.0.name`) as an error can name it. A key that is not well-formed text
 * (a lone surrogate, a NUL) is written as a JSON string (`fields."\ud800"`), so the text naming it
 * stays well-formed and holds no NUL; so is `__proto__`.
 */
export function dottedPath(path: readonly PropertyKey[]): string {
  return path
    .map((key) => (typeof key === 'string' && (key === '__proto__' || key.includes('\u0000') || !isWellFormedText(key)) ? JSON.stringify(key) : String(key)))
    .join('.');
}

function isHigh(c: number): boolean {
  return c >= 0xd800 && c <= 0xdbff;
}

function isLow(c: number): boolean {
  return c >= 0xdc00 && c <= 0xdfff;
}

/** The languages prompts are written in (spec §6); a session of any other language is told in one of them which language it writes. */
export type Locale = 'en' | 'zh-Hans';
export const LOCALES: readonly Locale[] = ['en', 'zh-Hans'];

/** The longest language tag accepted (BCP 47 sets no limit; this one keeps it bounded). */
export const MAX_LOCALE_TAG_LENGTH = 255;

/**
 * The canonical form of a well-formed BCP 47 language tag (`EN-us` → `en-US`, `cmn` → `zh`), or
 * null when the tag is ill-formed (`en_US!!`, `i-default`, empty, too long).
 */
export function canonicalLocaleTag(tag: string): string | null {
  if (tag.length === 0 || tag.length > MAX_LOCALE_TAG_LENGTH) return null;
  try {
    return Intl.getCanonicalLocales(tag)[0] ?? null;
  } catch {
    return null;
  }
}

export { estimateTokens, isCjkCodePoint, tallyTokens, tokensOfTally, joinTallies } from './estimate-tokens';
export type { TokenTally } from './estimate-tokens';
