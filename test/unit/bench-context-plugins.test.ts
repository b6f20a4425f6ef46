import { runContextPluginsBench } from '../../bench/context-plugins-bench';

/**
 * The issue-10 context bench measures what it names: 20 plugins loaded from generated folders, the
 * 5 `prompt.segment@1` handlers run on every iteration (a fresh LiveResolver) and their segments are
 * in the request, and the narrator's `io.selfData` read returns the bounded 50 of 500 rows, rendered
 * into the body (the bench checks the body and throws otherwise).
 */
describe('npm run bench: context with plugins', () => {
  it('runs the real plugin host, dynamic segments and the bounded selfData read at each size', async () => {
    const lines: string[] = [];
    const bench = await runContextPluginsBench([20, 200], 2, (l) => lines.push(l));
    expect(bench.plugins).toBe(20);
    expect(bench.segmentProviders).toBe(5);
    expect(bench.rows.map((r) => r.messages)).toEqual([20, 200]);
    for (const row of bench.rows) {
      expect(row).toMatchObject({ selfDataRows: 50, selfDataTotal: 500, dynamicSegments: 5 });
      expect(row.medianTotalMs).toBeGreaterThan(0);
      expect(row.p95TotalMs).toBeGreaterThanOrEqual(row.medianTotalMs);
    }
    expect(bench.rows[0].uncompactedRead).toBe(20);
    expect(lines).toHaveLength(2);
  }, 60_000);
});
