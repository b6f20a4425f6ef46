import { BoundedMemo } from '..';

describe('BoundedMemo', () => {
  it('keeps at most maxEntries, forgetting the oldest set first', () => {
    const memo = new BoundedMemo<string, number>({ maxEntries: 3 });
    for (const [i, key] of ['a', 'b', 'c', 'd'].entries()) {
      memo.set(key, i);
      expect(memo.size).toBeLessThanOrEqual(3);
    }
    expect(['a', 'b', 'c', 'd'].map((k) => memo.get(k))).toEqual([undefined, 1, 2, 3]);
    // a read does not make an entry younger; setting it again does
    expect(memo.get('b')).toBe(1);
    memo.set('e', 4);
    expect(memo.has('b')).toBe(false);
    memo.set('c', 20);
    memo.set('f', 5);
    expect(['c', 'd', 'e', 'f'].map((k) => memo.get(k))).toEqual([20, undefined, 4, 5]);
    expect(memo.size).toBe(3);
  });

  it('tells a kept undefined or null from an absent key (has), deletes, deletes by value, clears', () => {
    const memo = new BoundedMemo<string, string | null>({ maxEntries: 8 });
    memo.set('none', null);
    expect(memo.has('none')).toBe(true);
    expect(memo.get('none')).toBeNull();
    expect(memo.has('other')).toBe(false);
    memo.set('k1', 'revoked');
    memo.set('k2', 'revoked');
    memo.set('k3', 'kept');
    memo.deleteWhere((value) => value === 'revoked');
    expect(['k1', 'k2', 'k3'].map((k) => memo.has(k))).toEqual([false, false, true]);
    memo.delete('k3');
    expect(memo.has('k3')).toBe(false);
    memo.clear();
    expect(memo.size).toBe(0);
  });

  it('with ttlMs answers an entry for that long after it was set, then drops it', () => {
    let now = 1_000;
    const memo = new BoundedMemo<string, boolean>({ maxEntries: 8, ttlMs: 100, now: () => now });
    memo.set('s', true);
    now = 1_099;
    expect(memo.get('s')).toBe(true);
    expect(memo.has('s')).toBe(true);
    now = 1_100;
    expect(memo.get('s')).toBeUndefined();
    expect(memo.size).toBe(0);
    // setting again starts its time anew
    memo.set('s', false);
    now = 1_150;
    memo.set('s', true);
    now = 1_249;
    expect(memo.get('s')).toBe(true);
  });

  it('with ttlMs drops stale entries before fresh ones at the bound, and keeps nothing with ttlMs 0', () => {
    let now = 0;
    const memo = new BoundedMemo<string, number>({ maxEntries: 3, ttlMs: 100, now: () => now });
    memo.set('a', 1);
    now = 50;
    memo.set('b', 2);
    memo.set('c', 3);
    now = 120; // a is stale, b and c are fresh
    memo.set('d', 4);
    expect(['a', 'b', 'c', 'd'].map((k) => memo.get(k))).toEqual([undefined, 2, 3, 4]);
    memo.set('e', 5); // all fresh at the bound: the oldest (b) goes
    expect(['b', 'c', 'd', 'e'].map((k) => memo.get(k))).toEqual([undefined, 3, 4, 5]);
    const off = new BoundedMemo<string, number>({ maxEntries: 3, ttlMs: 0 });
    off.set('a', 1);
    expect(off.has('a')).toBe(false);
    expect(off.size).toBe(0);
  });

  it('counts time on Date.now by default (fake timers included)', () => {
    jest.useFakeTimers({ now: 10_000 });
    try {
      const memo = new BoundedMemo<string, number>({ maxEntries: 2, ttlMs: 1_000 });
      memo.set('a', 1);
      jest.advanceTimersByTime(999);
      expect(memo.get('a')).toBe(1);
      jest.advanceTimersByTime(1);
      expect(memo.get('a')).toBeUndefined();
    } finally {
      jest.useRealTimers();
    }
  });
});
