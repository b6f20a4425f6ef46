import { estimateTokens as contextEstimate } from '../../context';
import { estimateTokens as sdkEstimate } from '../../plugins-sdk';
import { estimateTokens, isCjkCodePoint, joinTallies, tallyTokens, tokensOfTally } from '..';

/** The scripts whose every code point is one CJK character for the estimate. */
const CJK_SCRIPTS = /^[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}\p{Script=Bopomofo}]$/u;

/** The rule as the spec states it, per code point with a regex: the reference. */
const CJK_REFERENCE =
  /[\u02ea\u02eb\u1100-\u11ff\u2e80-\u2fff\u3000-\u9fff\ua960-\ua97f\uac00-\ud7ff\uf900-\ufaff\ufe30-\ufe4f\uff00-\uffef\u{16fe0}-\u{16fff}\u{1aff0}-\u{1b16f}\u{1f200}-\u{1f2ff}\u{20000}-\u{3ffff}]/u;
function reference(text: string): number {
  let cjk = 0;
  let other = 0;
  for (const ch of text) {
    if (CJK_REFERENCE.test(ch)) cjk++;
    else other++;
  }
  return cjk + Math.ceil(other / 4);
}

/** A small deterministic generator (mulberry32): the same strings on every run. */
function random(seed: number) {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('estimateTokens (spec §5: about one token per CJK character, one per four others)', () => {
  it('is the one estimate: libs/context and the plugin SDK hand out this function', () => {
    expect(contextEstimate).toBe(estimateTokens);
    expect(sdkEstimate).toBe(estimateTokens);
  });

  it('Latin text: one token per four characters, rounded up', () => {
    expect(estimateTokens('')).toBe(0);
    expect(estimateTokens('abcd')).toBe(1);
    expect(estimateTokens('abcde')).toBe(2);
    expect(estimateTokens('The ember is still warm.')).toBe(6);
  });

  it('CJK ideographs: one token each, astral ones (𠮷, Extension B and later) included', () => {
    expect(estimateTokens('龍の背')).toBe(3);
    expect(estimateTokens('地図')).toBe(2);
    expect(estimateTokens('𠮷𠮷𠮷𠮷')).toBe(4); // 𠮷 is U+20BB7: two UTF-16 units, one character
    expect(estimateTokens('\u{2a700}\u{31350}\u{2f800}')).toBe(3);
    expect(estimateTokens('\u2f00\u2e80')).toBe(2); // Kangxi and CJK radicals
  });

  it('kana: hiragana, katakana, halfwidth katakana and the kana supplement', () => {
    expect(estimateTokens('ひらがな')).toBe(4);
    expect(estimateTokens('カタカナ')).toBe(4);
    expect(estimateTokens('ｶﾀｶﾅ')).toBe(4);
    expect(estimateTokens('\u{1b001}\u{1b150}')).toBe(2);
  });

  it('Hangul: syllables, conjoining Jamo (a decomposed syllable is one token per Jamo), compatibility Jamo', () => {
    expect(estimateTokens('한국어')).toBe(3);
    expect(estimateTokens('한국어'.normalize('NFD'))).toBe(8);
    expect(estimateTokens('ㅎㄱ')).toBe(2);
    expect(estimateTokens('\ud7b0\ua960')).toBe(2);
  });

  it('CJK punctuation and fullwidth forms count as CJK: 米拉：坐。', () => {
    expect(estimateTokens('米拉：坐。')).toBe(5);
    expect(estimateTokens('，！？')).toBe(3);
    expect(estimateTokens('﹁﹂')).toBe(2); // vertical forms
  });

  it('emoji: each code point is one other character, never each UTF-16 unit', () => {
    expect(estimateTokens('🧑🧑🧑🧑')).toBe(1); // four code points, eight units
    expect(estimateTokens('👨‍👩‍👧')).toBe(2); // five code points (three emoji, two ZWJ)
    expect(estimateTokens('🇯🇵')).toBe(1); // two regional indicators
    expect(estimateTokens('👍🏽')).toBe(1); // emoji and skin tone
    expect(estimateTokens('🈚')).toBe(1); // enclosed ideograph: one CJK character
  });

  it('mixed text adds both counts', () => {
    // 4 CJK + "Mira says " (10 others) + "🐉" (1) + " " (1) → 4 + ceil(12 / 4)
    expect(estimateTokens('Mira says 龍の背に🐉 ')).toBe(7);
    expect(estimateTokens('é'.normalize('NFD').repeat(2))).toBe(1); // a letter and its combining mark: two code points each
  });

  it('a lone surrogate counts as one other character, as a code-point walk sees it', () => {
    for (const s of ['\ud800', '\udc00', 'a\ud800b', '\ud800\ud800\udc00', '\udc00\ud800', 'x\udbff', '\ud83e\udd11\udc00', '\ud840\udfb7\ud840'])
      expect(estimateTokens(s)).toBe(reference(s));
  });

  it('every code point of the Han, Hiragana, Katakana, Hangul and Bopomofo scripts is CJK; Latin, Cyrillic, Arabic and emoji are not', () => {
    const missed: string[] = [];
    for (let c = 0; c <= 0x3ffff; c++) {
      if (c >= 0xd800 && c <= 0xdfff) continue;
      if (CJK_SCRIPTS.test(String.fromCodePoint(c)) && !isCjkCodePoint(c)) missed.push(c.toString(16));
    }
    expect(missed).toEqual([]);
    for (const ch of ['a', 'é', 'Ж', 'خ', 'ก', '🐉', '\u200d', '\ufe0f', '\u{1f9d1}']) expect(isCjkCodePoint(ch.codePointAt(0)!)).toBe(false);
  });

  it('gives the reference count on random mixed text (ASCII, CJK, kana, Hangul, emoji, surrogate halves, range edges)', () => {
    const next = random(12);
    const pool = [
      'a',
      ' ',
      'é',
      '地',
      '図',
      'の',
      'ｶ',
      '한',
      '\u1100',
      '。',
      'Ａ',
      '🧑',
      '‍',
      '🚀',
      '𠮷',
      'خ',
      '\ud800',
      '\udc00',
      '\u3000',
      '\ud7ff',
      '\ud7b0',
      '\uffef',
      '\ufff0',
      '\u2dff',
      '\u{1f300}',
    ];
    for (let n = 0; n < 300; n++) {
      const text = Array.from({ length: Math.floor(next() * 60) }, () => pool[Math.floor(next() * pool.length)]).join('');
      expect(estimateTokens(text)).toBe(reference(text));
    }
  });

  it('joined tallies of parts give the estimate of the parts concatenated, a surrogate pair split between two parts one code point', () => {
    const join = (...parts: string[]) => tokensOfTally(joinTallies(parts.map(tallyTokens)));
    // 𠮷 (U+20BB7, CJK) and 🚀 (other) cut between their two halves
    expect(join('abc\ud842', '\udfb7de')).toBe(estimateTokens('abc𠮷de'));
    // one CJK character and five others (two halves added apart would be seven others: 2)
    expect(join('abc\ud842', '\udfb7de')).toBe(3);
    expect(join('\ud83d', '', '\ude80')).toBe(estimateTokens('🚀'));
    expect(join()).toBe(0);
    expect(tallyTokens('')).toEqual({ cjk: 0, other: 0, first: -1, last: -1 });
    const next = random(7);
    const pool = ['a', ' ', '地', 'の', '한', '🚀', '𠮷', '\ud800', '\udc00', '\ud842', '\udfb7', 'é'];
    for (let n = 0; n < 300; n++) {
      const parts = Array.from({ length: Math.floor(next() * 6) }, () =>
        Array.from({ length: Math.floor(next() * 8) }, () => pool[Math.floor(next() * pool.length)]).join(''),
      );
      expect(join(...parts)).toBe(estimateTokens(parts.join('')));
    }
  });
});
