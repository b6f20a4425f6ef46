import { estimateTokens } from '../estimate-tokens';

/** The rule as the spec states it, per code point with a regex (the former implementation): the reference. */
function reference(text: string): number {
  let cjk = 0;
  let other = 0;
  for (const ch of text) {
    if (/[\u3000-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef]/u.test(ch)) cjk++;
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

describe('estimateTokens', () => {
  it('one token per CJK character, one per four others, counted by code point', () => {
    expect(estimateTokens('')).toBe(0);
    expect(estimateTokens('abcd')).toBe(1);
    expect(estimateTokens('abcde')).toBe(2);
    expect(estimateTokens('地図')).toBe(2);
    expect(estimateTokens('한국')).toBe(2);
    // four astronauts: four code points (eight UTF-16 units), one token
    expect(estimateTokens('🧑🧑🧑🧑')).toBe(1);
    // the edges of each CJK range, and one past them
    expect(estimateTokens('\u3000\u9fff\uac00\ud7af\uf900\ufaff\uff00\uffef')).toBe(8);
    expect(estimateTokens('\u2fff\ua000\uabff\ufb00\ufeff\ufff0\u0041\u0042')).toBe(2);
  });

  it('a lone surrogate counts as one character, as a code-point walk sees it', () => {
    for (const s of ['\ud800', '\udc00', 'a\ud800b', '\ud800\ud800\udc00', '\udc00\ud800', 'x\udbff', '\ud83e\udd11\udc00'])
      expect(estimateTokens(s)).toBe(reference(s));
  });

  it('gives the reference count on mixed text (ASCII, CJK, Hangul, emoji, surrogate halves)', () => {
    const next = random(12);
    const pool = ['a', ' ', 'é', '地', '図', '한', '。', 'Ａ', '🧑', '‍', '🚀', 'خ', '\ud800', '\udc00', '\u3000', '\ud7af', '\ud7b0', '\uffef', '\ufff0'];
    for (let n = 0; n < 300; n++) {
      const text = Array.from({ length: Math.floor(next() * 60) }, () => pool[Math.floor(next() * pool.length)]).join('');
      expect(estimateTokens(text)).toBe(reference(text));
    }
  });
});
