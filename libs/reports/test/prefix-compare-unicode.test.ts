import { comparePrefix, type RecordedRequest } from '..';
import { codePointLength, isWellFormedText } from '../../text';

const request = (system: string, user: string): RecordedRequest => ({
  protocol: 'openai-chat',
  body: {
    messages: [
      { role: 'system', content: system },
      { role: 'user', content: user },
    ],
  },
});

const segmenter = new Intl.Segmenter('und', { granularity: 'grapheme' });
const boundaries = (text: string) => new Set([...segmenter.segment(text)].map((s) => s.index).concat(text.length));

/** True when `snippet` sits in `text` from one cluster boundary to another, over `offset`. */
function wholeClustersAround(text: string, snippet: string, offset: number): boolean {
  const cuts = boundaries(text);
  for (let s = Math.min(offset, text.length); s >= 0 && s + snippet.length >= offset; s--) {
    if (text.startsWith(snippet, s) && cuts.has(s) && cuts.has(s + snippet.length)) return true;
  }
  return false;
}

const FAMILY = '👨‍👩‍👧‍👦';
const TEXTS: Record<string, string> = {
  'x + 40 × 😀': 'x' + '😀'.repeat(40),
  'emoji only': '😀'.repeat(90),
  'ZWJ families': FAMILY.repeat(25),
  flags: '🇯🇵🇫🇷🇺🇸'.repeat(20),
  CJK: '龍の背に乗って旅をする。'.repeat(12),
  Arabic: 'مَرْحَبًا بِكَ فِي الْقَرْيَةِ '.repeat(6),
  Hebrew: 'שָׁלוֹם עוֹלָם '.repeat(10),
  'combining marks': 'e\u0301'.repeat(80),
};

/**
 * The ±60 snippets of the first difference go into a jsonb column: a snippet cut inside a
 * surrogate pair is rejected by PostgreSQL (22P02) and used to stop the projection.
 */
describe('first-difference snippets never cut a grapheme cluster', () => {
  describe.each(Object.entries(TEXTS))('%s', (_, text) => {
    it('with the difference at every position, the snippets are well-formed whole clusters of at most 60 code points a side', () => {
      // the previous request is the text; the current one changes it at position i (or appends, or cuts)
      for (let i = 0; i <= text.length; i++) {
        for (const current of [text.slice(0, i) + '!' + text.slice(i), text.slice(0, i), text.slice(0, i) + '😁' + text.slice(i + 2)]) {
          if (!isWellFormedText(current)) continue; // input validation rejects lone surrogates
          const cmp = comparePrefix(request('sys', text), request('sys', current));
          const d = cmp.firstDifference;
          if (current === text) {
            expect(d).toBeNull();
            continue;
          }
          expect(d).not.toBeNull();
          const { before, after, offset } = d!;
          expect(isWellFormedText(before) && isWellFormedText(after)).toBe(true);
          expect(JSON.parse(JSON.stringify(d))).toEqual(d);
          // the offset is a cluster boundary of both texts, with the same text before it
          expect(boundaries(text).has(offset) && boundaries(current).has(offset)).toBe(true);
          expect(text.slice(0, offset)).toBe(current.slice(0, offset));
          // each snippet is a run of whole clusters of its text, around the offset
          expect(wholeClustersAround(text, before, offset)).toBe(true);
          expect(wholeClustersAround(current, after, offset)).toBe(true);
          expect(codePointLength(before)).toBeLessThanOrEqual(120);
          expect(codePointLength(after)).toBeLessThanOrEqual(120);
        }
      }
    });
  });

  it('x + 40 × 😀 against x + 41 × 😀: the snippets are 60 code points each side', () => {
    const previous = 'x' + '😀'.repeat(40) + ' end';
    const current = 'x' + '😀'.repeat(41) + ' end';
    const d = comparePrefix(request('s', previous), request('s', current)).firstDifference!;
    expect(d.offset).toBe(1 + 2 * 40);
    expect(d.before).toBe(previous); // 41 code points before the difference, 4 after: all fit
    expect(d.after).toBe(current);
    const long = 'x' + '😀'.repeat(100);
    const d2 = comparePrefix(request('s', long), request('s', long + '!')).firstDifference!;
    expect(d2.before).toBe('😀'.repeat(60));
    expect(d2.after).toBe('😀'.repeat(60) + '!');
  });
});
