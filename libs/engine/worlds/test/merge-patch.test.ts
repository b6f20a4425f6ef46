import { applyMergePatch } from '../merge-patch';

/** RFC 7396, appendix A: every example, target + patch → result. */
const EXAMPLES: [unknown, unknown, unknown][] = [
  [{ a: 'b' }, { a: 'c' }, { a: 'c' }],
  [{ a: 'b' }, { b: 'c' }, { a: 'b', b: 'c' }],
  [{ a: 'b' }, { a: null }, {}],
  [{ a: 'b', b: 'c' }, { a: null }, { b: 'c' }],
  [{ a: ['b'] }, { a: 'c' }, { a: 'c' }],
  [{ a: 'c' }, { a: ['b'] }, { a: ['b'] }],
  [{ a: { b: 'c' } }, { a: { b: 'd', c: null } }, { a: { b: 'd' } }],
  [{ a: [{ b: 'c' }] }, { a: [1] }, { a: [1] }],
  [['a', 'b'], ['c', 'd'], ['c', 'd']],
  [{ a: 'b' }, ['c'], ['c']],
  [{ a: 'foo' }, null, null],
  [{ a: 'foo' }, 'bar', 'bar'],
  [{ e: null }, { a: 1 }, { e: null, a: 1 }],
  [[1, 2], { a: 'b', c: null }, { a: 'b' }],
  [{}, { a: { bb: { ccc: null } } }, { a: { bb: {} } }],
];

describe('JSON Merge Patch (RFC 7396)', () => {
  it.each(EXAMPLES)('%j patched with %j is %j', (target, patch, result) => {
    expect(applyMergePatch(target, patch)).toEqual(result);
  });

  it('leaves the target as it was, and treats a __proto__ key of a JSON body as data', () => {
    const target = { a: { b: 1 } };
    const patched = applyMergePatch(target, JSON.parse('{"a":{"c":2},"__proto__":{"polluted":true}}')) as Record<string, unknown>;
    expect(target).toEqual({ a: { b: 1 } });
    expect(patched.a).toEqual({ b: 1, c: 2 });
    expect(Object.getPrototypeOf(patched)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.keys(patched)).toEqual(['a', '__proto__']);
  });
});
