import { SubmitInputBody } from './bodies';
import { codePointLength } from '../../libs/text';
import { isBlank, safeText } from './safe-text';

describe('safeText: the string rules of every body field', () => {
  const text = safeText({ max: 5 });
  const issues = (value: unknown) => (text.safeParse(value).error?.issues ?? []).map((i) => i.message);

  it('counts characters by code point, not UTF-16 unit', () => {
    expect(codePointLength('😀👩‍👩‍👧龍')).toBe(7);
    expect(text.parse('😀😀😀😀😀')).toBe('😀😀😀😀😀');
    expect(issues('😀😀😀😀😀😀')).toEqual(['must be at most 5 characters']);
    // the input limit: 16,000 emoji (32,000 UTF-16 units) fit, 16,001 do not
    expect(SubmitInputBody.safeParse({ text: '😀'.repeat(16_000) }).success).toBe(true);
    expect(SubmitInputBody.safeParse({ text: '😀'.repeat(16_001) }).success).toBe(false);
  });

  it('rejects lone surrogates and NUL, with one reason each', () => {
    expect(issues('ab\ud800')).toEqual(['must be well-formed Unicode (found a lone surrogate)']);
    expect(issues('\udc00')).toEqual(['must be well-formed Unicode (found a lone surrogate)']);
    expect(issues('a\u0000')).toEqual(['must not contain NUL (U+0000)']);
    expect(issues('\u0000')).toEqual(['must not contain NUL (U+0000)']);
  });

  it('treats zero-width, format and whitespace-only text as empty; keeps real text with them inside', () => {
    for (const blank of ['', ' ', '\u200b', '\u200c\u200d\u2060\ufeff', '\u00ad\u200e\u202e', '\ufe0f\u034f', '\u3000\u180e', '\u{e0020}\u{e007f}', '\u0001']) {
      expect(isBlank(blank)).toBe(true);
      expect(issues(blank)).toEqual(['must not be empty']);
    }
    for (const real of ['a', '👩‍👩‍👧', '龍', 'مرحبا', '\u200bx', 'ก']) expect(isBlank(real)).toBe(false);
    expect(text.parse('  \u200dhi ')).toBe('\u200dhi');
  });
});
