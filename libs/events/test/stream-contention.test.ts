import { StreamContention } from '../stream-contention';

describe('StreamContention: streams others appended to first lately', () => {
  it('a stream counts as contended for the memory after its last contention, then not', () => {
    let now = 1_000;
    const contention = new StreamContention(100, 10, () => now);
    expect(contention.contended('s')).toBe(false);
    contention.record('s');
    expect(contention.contended('s')).toBe(true);
    expect(contention.contended('other')).toBe(false);
    now += 99;
    expect(contention.contended('s')).toBe(true);
    // contended again: remembered from now on
    contention.record('s');
    now += 99;
    expect(contention.contended('s')).toBe(true);
    now += 1;
    expect(contention.contended('s')).toBe(false);
  });

  it('remembers at most its bound: the expired streams go first, then the oldest', () => {
    let now = 0;
    const contention = new StreamContention(100, 3, () => now);
    contention.record('a');
    now = 50;
    contention.record('b');
    contention.record('c');
    now = 120; // a has expired
    contention.record('d');
    expect(['a', 'b', 'c', 'd'].map((s) => contention.contended(s))).toEqual([false, true, true, true]);
    contention.record('e'); // nothing expired: b, the oldest, goes
    expect(['b', 'c', 'd', 'e'].map((s) => contention.contended(s))).toEqual([false, true, true, true]);
  });
});
