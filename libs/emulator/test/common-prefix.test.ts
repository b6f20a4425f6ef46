import { commonPrefixLength } from '../prefix-cache';

/** The definition: code unit by code unit. */
function byCodeUnit(a: string, b: string): number {
  let i = 0;
  while (i < a.length && i < b.length && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  return i;
}

describe('commonPrefixLength (whole chunks compared first)', () => {
  // long enough for every chunk length, with text outside the BMP (two code units a character)
  const base = Array.from({ length: 900 }, (_, i) => `{"role":"user","content":"Turn ${i}: ünïcode 𝒜 the archive"}`).join('');

  it('is the code-unit prefix length where the two differ at and around every chunk boundary', () => {
    const at = [0, 1, 15, 16, 17, 255, 256, 257, 4095, 4096, 4097, 4096 + 256 + 16, 8191, 8192, 8193, base.length - 1];
    for (const k of at) {
      const other = `${base.slice(0, k)}\u0000${base.slice(k + 1)}`;
      expect([k, commonPrefixLength(base, other)]).toEqual([k, byCodeUnit(base, other)]);
      expect(commonPrefixLength(base, other)).toBe(k);
    }
  });

  it('one a prefix of the other, equal strings, empty strings', () => {
    for (const k of [0, 16, 300, 4096, 5000, base.length]) {
      expect(commonPrefixLength(base, base.slice(0, k))).toBe(k);
      expect(commonPrefixLength(base.slice(0, k), base)).toBe(k);
    }
    expect(commonPrefixLength(base, `${base}`)).toBe(base.length);
    expect(commonPrefixLength('', base)).toBe(0);
  });

  it('counts a character outside the BMP whose second code unit differs as half shared, as the code-unit loop does', () => {
    const i = base.indexOf('𝒜', 5000);
    const other = `${base.slice(0, i)}𝒝${base.slice(i + 2)}`;
    expect(commonPrefixLength(base, other)).toBe(byCodeUnit(base, other));
    expect(commonPrefixLength(base, other)).toBe(i + 1);
  });
});
