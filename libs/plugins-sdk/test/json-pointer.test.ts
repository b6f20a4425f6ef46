import { evaluatePointer, JSON_POINTER_PATTERN, JsonPointer } from '..';

describe('evaluatePointer (RFC 6901), the one JSON-pointer evaluator', () => {
  // the examples of RFC 6901 §5
  const doc = { foo: ['bar', 'baz'], '': 0, 'a/b': 1, 'c%d': 2, 'e^f': 3, 'g|h': 4, 'i\\j': 5, 'k"l': 6, ' ': 7, 'm~n': 8 };
  it.each([
    ['', doc],
    ['/foo', ['bar', 'baz']],
    ['/foo/0', 'bar'],
    ['/', 0],
    ['/a~1b', 1],
    ['/c%d', 2],
    ['/e^f', 3],
    ['/g|h', 4],
    ['/i\\j', 5],
    ['/k"l', 6],
    ['/ ', 7],
    ['/m~0n', 8],
  ])('%s', (pointer, value) => expect(evaluatePointer(doc, pointer)).toEqual({ found: true, value }));

  it('finds nothing past the value, and says at which token: a missing member, an index out of range, a leading zero, "-", a step into a scalar, an inherited property', () => {
    const misses: [string, string][] = [
      ['/nope', '/nope'],
      ['/foo/2', '/foo/2'],
      ['/foo/01', '/foo/01'],
      ['/foo/-', '/foo/-'],
      ['/foo/0/x', '/foo/0/x'],
      ['/nope/deeper/still', '/nope'],
      ['/constructor', '/constructor'],
      ['/toString', '/toString'],
      ['/__proto__', '/__proto__'],
      ['/a~1b/c', '/a~1b/c'],
    ];
    for (const [pointer, at] of misses) expect(evaluatePointer(doc, pointer)).toEqual({ found: false, at });
    expect(evaluatePointer({ constructor: 'own' }, '/constructor')).toEqual({ found: true, value: 'own' });
    expect(evaluatePointer({ '~1': 'decoded in order' }, '/~01')).toEqual({ found: true, value: 'decoded in order' });
  });

  it('takes Unicode member names whole (CJK, emoji, combining marks)', () => {
    const value = { 龍: { '👨‍👩‍👧': ['é'] } };
    expect(evaluatePointer(value, '/龍/👨‍👩‍👧/0')).toEqual({ found: true, value: 'é' });
    expect(evaluatePointer(value, '/龍/👨')).toEqual({ found: false, at: '/龍/👨' });
  });

  it('one syntax: the manifest (JsonPointer) and the tools (JSON_POINTER_PATTERN) accept the same pointers', () => {
    const syntax = new RegExp(JSON_POINTER_PATTERN);
    for (const pointer of ['', '/', '/a~0b', '/a~1b/0', '/龍']) {
      expect(syntax.test(pointer)).toBe(true);
      expect(JsonPointer.safeParse(pointer).success).toBe(true);
    }
    for (const pointer of ['a', '/a~2', '/~', 'facts/0']) {
      expect(syntax.test(pointer)).toBe(false);
      expect(JsonPointer.safeParse(pointer).success).toBe(false);
    }
  });
});
