import {
  advanceCodePoints,
  codePointLength,
  commonGraphemePrefix,
  dottedPath,
  graphemeEnd,
  graphemeStart,
  isWellFormedText,
  recordableText,
  retreatCodePoints,
  sliceAround,
  truncateText,
  windowAround,
} from '..';

const FAMILY = '👨‍👩‍👧‍👦';
const SAMPLES: Record<string, string> = {
  'emoji after x': 'x' + '😀'.repeat(40),
  'emoji at start, middle, end': '😀abc😀def😀',
  'ZWJ families': FAMILY.repeat(6) + 'abc' + FAMILY,
  'skin tones': 'a👍🏽b👩🏿‍🚀c',
  flags: '🇯🇵🇫🇷🇺🇸🇩🇪🇧🇷'.repeat(3),
  CJK: '龍の背に乗って旅をする。火山の村へ向かう。𠮷野家',
  'Arabic with harakat': 'مَرْحَبًا بِكَ فِي الْقَرْيَةِ، أَيُّهَا الْمُسَافِرُ',
  'Hebrew with niqqud': 'שָׁלוֹם עוֹלָם, בָּרוּךְ הַבָּא',
  'combining marks': 'e\u0301'.repeat(12) + 'Z\u0351\u0352\u0353\u0354\u0355o',
  'Hangul jamo': '\u1100\u1161\u11a8\u1100\u1161\u11a8가',
  CRLF: 'a\r\nb\r\n',
  // ASCII (controls, CR, LF) next to what joins a cluster: the boundaries found without the segmenter agree with it
  'ASCII next to clusters': '\r\n\x01a\x7f\u0301b\u200d😀c\r\u0308\n\re\u0301\u0301 🇯🇵.👍🏽\u0600x\u0903y\u1100\u1161z\r\n',
  empty: '',
};

const segmenter = new Intl.Segmenter('und', { granularity: 'grapheme' });
function boundaries(text: string): Set<number> {
  const set = new Set([0, text.length]);
  for (const s of segmenter.segment(text)) set.add(s.index);
  return set;
}

describe.each(Object.entries(SAMPLES))('%s', (_, text) => {
  const cuts = boundaries(text);
  const offsets = Array.from({ length: text.length + 2 }, (_, i) => i);

  it('graphemeStart / graphemeEnd land on the boundaries around every offset', () => {
    for (const i of offsets) {
      const s = graphemeStart(text, i);
      const e = graphemeEnd(text, i);
      expect(cuts.has(s)).toBe(true);
      expect(cuts.has(e)).toBe(true);
      expect(s).toBeLessThanOrEqual(Math.min(i, text.length));
      expect(e).toBeGreaterThanOrEqual(Math.min(i, text.length));
      // nearest: no boundary strictly between
      for (let j = s + 1; j < Math.min(i, text.length); j++) expect(cuts.has(j)).toBe(false);
      for (let j = Math.min(i, text.length) + 1; j < e; j++) expect(cuts.has(j)).toBe(false);
    }
  });

  it('truncateText keeps whole clusters, at most n code points, as many as fit', () => {
    for (let n = 0; n <= codePointLength(text) + 1; n++) {
      const t = truncateText(text, n);
      expect(text.startsWith(t)).toBe(true);
      expect(cuts.has(t.length)).toBe(true);
      expect(isWellFormedText(t)).toBe(true);
      expect(codePointLength(t)).toBeLessThanOrEqual(n);
      const next = graphemeEnd(text, t.length + 1);
      if (t.length < text.length) expect(codePointLength(text.slice(0, next))).toBeGreaterThan(n);
    }
  });

  it('sliceAround cuts whole clusters, at most the radius on each side, around every offset', () => {
    for (const radius of [0, 1, 2, 3, 5, 7, 60]) {
      for (const offset of offsets) {
        const { start, end } = windowAround(text, offset, radius);
        const at = graphemeStart(text, offset);
        const slice = sliceAround(text, offset, radius);
        expect(slice).toBe(text.slice(start, end));
        expect(isWellFormedText(slice)).toBe(true);
        expect(cuts.has(start) && cuts.has(end)).toBe(true);
        expect(start).toBeLessThanOrEqual(at);
        expect(end).toBeGreaterThanOrEqual(at);
        expect(codePointLength(text.slice(start, at))).toBeLessThanOrEqual(radius);
        expect(codePointLength(text.slice(at, end))).toBeLessThanOrEqual(radius);
        // as much as fits: one more cluster on either side would pass the radius
        if (start > 0) expect(codePointLength(text.slice(graphemeStart(text, start - 1), at))).toBeGreaterThan(radius);
        if (end < text.length) expect(codePointLength(text.slice(at, graphemeEnd(text, end + 1)))).toBeGreaterThan(radius);
      }
    }
  });

  it('code point steps never stop inside a surrogate pair', () => {
    for (const i of offsets) {
      for (const n of [0, 1, 2, 5]) {
        expect(isWellFormedText(text.slice(0, advanceCodePoints(text, graphemeStart(text, i), n)))).toBe(true);
        expect(isWellFormedText(text.slice(retreatCodePoints(text, graphemeStart(text, i), n)))).toBe(true);
      }
    }
  });
});

describe('commonGraphemePrefix', () => {
  it.each([
    ['😀 vs 😁 (same high surrogate)', 'ab😀c', 'ab😁c', 2],
    ['a family vs another family (differs in the last person)', `x${FAMILY}`, 'x👨‍👩‍👧‍👧', 1],
    ['e vs e + combining acute', 'caf' + 'e', 'caf' + 'e\u0301', 3],
    ['one flag vs another (same first letter)', '🇯🇵🇯🇵', '🇯🇵🇯🇲', 4],
    ['CJK', '龍の背に乗る', '龍の背を見る', 3],
    ['Arabic harakat', 'بِكَ', 'بِكِ', 2],
    ['Hebrew niqqud (holam on the lamed: its cluster differs)', 'שָׁלוֹם', 'שָׁלֹם', 3],
    ['a prefix of the other', 'abc', 'abcdef', 3],
    ['skin tone added', 'a👍', 'a👍🏽', 1],
    ['equal', 'same😀', 'same😀', 6],
  ])('%s', (_, a, b, expected) => {
    const k = commonGraphemePrefix(a, b);
    expect(k).toBe(expected);
    expect(a.slice(0, k)).toBe(b.slice(0, k));
    expect(boundaries(a).has(k) && boundaries(b).has(k)).toBe(true);
  });
});

describe('isWellFormedText', () => {
  it('finds lone surrogates the way String.prototype.isWellFormed does', () => {
    for (const s of ['', 'abc', '😀', '\ud83d', '\ude00', 'a\ud83db', '\ude00\ud83d', FAMILY, 'x' + '😀'.repeat(40).slice(0, 59)]) {
      expect(isWellFormedText(s)).toBe((s as unknown as { isWellFormed(): boolean }).isWellFormed());
    }
  });

  it('a cut by UTF-16 units can leave a lone surrogate; truncateText and sliceAround cannot', () => {
    const text = 'x' + '😀'.repeat(40);
    expect(isWellFormedText(text.slice(0, 60))).toBe(false); // what prefix-compare did at ±60 units
    expect(truncateText(text, 30)).toBe('x' + '😀'.repeat(29));
    expect(truncateText(text, 120)).toBe(text);
    expect(sliceAround(text, 0, 20)).toBe('x' + '😀'.repeat(19));
    expect(sliceAround(text, 41, 3)).toBe('😀'.repeat(6)); // offset 41 is inside the 20th emoji: moved to its start
  });
});

describe('codePointLength', () => {
  it('counts code points as the string iterator does, a lone surrogate as one', () => {
    const texts = [...Object.values(SAMPLES), '', 'a', '\ud83d', '\ude00', 'x\ud83dy', '\ude00\ud83d', '\ud83d\ud83d\ude00', '😀\ud83d', 'مرحبا 你好 👩‍👩‍👧'];
    for (const text of texts) expect(codePointLength(text)).toBe([...text].length);
  });
});

describe('recordableText and dottedPath (what an event can hold)', () => {
  it('recordableText turns each U+0000 and lone surrogate into U+FFFD, and leaves pairs, ZWJ, CJK and RTL alone', () => {
    expect(recordableText('a\u0000b\ud83d c\ude00 😀 👩‍👩‍👧 地図 مرحبا')).toBe('a\ufffdb\ufffd c\ufffd 😀 👩‍👩‍👧 地図 مرحبا');
  });

  it('dottedPath writes a key that is not recordable text (or __proto__) as a JSON string', () => {
    expect(dottedPath(['characters', 0, 'name'])).toBe('characters.0.name');
    expect(dottedPath(['fields', '\udc00k', 'a\u0000', '__proto__', '地図'])).toBe('fields."\\udc00k"."a\\u0000"."__proto__".地図');
  });
});
