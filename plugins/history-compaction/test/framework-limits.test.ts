import { compactionLimits, MAX_SUMMARY_SEGMENTS } from '../../../libs/context';
import { MAX_SEGMENTS, segmentCap, totalBudget } from '../server/budget';

/**
 * The plugin plans with its own copy of the budget table (a plugin cannot import the engine); the
 * framework refuses any result over its limits. The two must agree at every window, or a result the
 * plugin thinks fits would be refused at a bound.
 */
describe("the plugin's budget table agrees with the framework's limits", () => {
  it('at every window up to 300,000 tokens: the same total, the same segment cap, the same segment count', () => {
    const disagreements: number[] = [];
    for (let window = 0; window <= 300_000; window++) {
      const framework = compactionLimits(window);
      if (framework.totalTokens !== totalBudget(window) || framework.segmentTokens !== segmentCap(window)) disagreements.push(window);
    }
    expect(disagreements.slice(0, 10)).toEqual([]);
    expect(MAX_SEGMENTS).toBe(MAX_SUMMARY_SEGMENTS);
  });
});
