import { runEmberback } from '../../bench/emberback-bench';

describe('Emberback, 50 turns on the emulator', () => {
  it("the narrator's shared prefix covers at least 95% of the previous turn's request on every turn; every turn's audit is byte-identical", async () => {
    const result = await runEmberback(50, () => undefined);
    const narrator = result.rows.filter((r) => r.runtime === 'narrator/narrator');
    expect(narrator).toHaveLength(50);
    for (const r of narrator.slice(1)) expect(r.sharedPercent).toBeGreaterThanOrEqual(95);
    expect(result.auditIdentical).toBe(true);
    // keyword lorebook entries fired at depth: they never broke the prefix, and the lore is in the system prompt
    expect(result.cachedShare).toBeGreaterThan(0);
  }, 180_000);
});
