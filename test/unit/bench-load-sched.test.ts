import { cpuCeiling, formatContention, watchContention } from '../../bench/load/sched';

const linux = process.platform === 'linux';

describe('bench:load contention (sched.ts)', () => {
  (linux ? it : it.skip)('counts the time a watched process ran and waited for a core over the window', async () => {
    const watch = watchContention({ bench: [process.pid], gone: [2 ** 22 + 1] }, 10);
    const until = performance.now() + 60;
    while (performance.now() < until); // on CPU for 60 ms
    await new Promise((r) => setTimeout(r, 30)); // and a sample of the runnable tasks
    const c = watch.stop();
    expect(c.onCpuPercent.bench).toBeGreaterThan(10);
    expect(c.onCpuPercent.bench! + c.waitingPercent.bench!).toBeLessThanOrEqual(101);
    expect(c.waitingPercent.gone).toBeNull(); // no such process: no figure, not 0
    expect(c.runnable.p50).not.toBeNull();
  });

  it('formats one line, a dash for a figure it could not read', () => {
    const line = formatContention(
      { waitingPercent: { workers: 84.2, api: null }, onCpuPercent: { workers: 8.7, api: null }, runnable: { p50: 13, p90: 17 }, pressurePercent: 90.4 },
      2,
    );
    expect(line).toBe(
      '% of the window main threads waited for a core / ran: workers 84/9, api —/—; runnable tasks p50/p90 13/17 on 2 cores; CPU pressure (some task waiting) 90 %',
    );
  });

  it('the ceiling: the turns/s the cores allow at the CPU a turn costs the run', () => {
    expect(cpuCeiling(32_000, 1_000, 2)).toEqual({ msPerTurn: 32, turnsPerSecond: 62.5 });
    expect(cpuCeiling(0, 0, 2)).toEqual({ msPerTurn: 0, turnsPerSecond: null });
  });
});
