import { clipLine } from '..';

describe('clipLine (ctx.sdk: a tool summary on one line)', () => {
  it('puts the text on one line and keeps it whole when it fits', () => {
    expect(clipLine('  Mira:\n  3\t(amused)  ', 200)).toBe('Mira: 3 (amused)');
    expect(clipLine('🐉'.repeat(5), 5)).toBe('🐉'.repeat(5));
  });

  it('cuts by code points, with … as the last of at most max', () => {
    expect(clipLine('🐉'.repeat(6), 5)).toBe(`${'🐉'.repeat(4)}…`);
    expect(clipLine('灰烬河的摆渡人', 4)).toBe('灰烬河…');
  });

  it('never cuts inside a grapheme cluster (an emoji sequence stays whole or goes)', () => {
    const family = '👩‍👩‍👧'; // 5 code points, one grapheme
    expect(clipLine(`ab${family}cd`, 6)).toBe('ab…');
  });
});
