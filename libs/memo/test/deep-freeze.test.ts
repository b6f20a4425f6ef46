import { deepFreeze } from '..';

describe('deepFreeze', () => {
  it('freezes the value and everything in it, in place, and returns it', () => {
    const value = { a: [{ b: 'ä' }, 2], c: { d: { e: null } } };
    expect(deepFreeze(value)).toBe(value);
    for (const part of [value, value.a, value.a[0], value.c, value.c.d]) expect(Object.isFrozen(part)).toBe(true);
    expect(() => {
      'use strict';
      (value.c.d as { e: unknown }).e = 1;
    }).toThrow(TypeError);
    expect(deepFreeze('text')).toBe('text');
    expect(deepFreeze(null)).toBeNull();
  });
});
