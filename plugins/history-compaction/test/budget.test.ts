import { newSegmentBudget, segmentBudget, segmentCap, totalBudget } from '../server/budget';
import { planMerge } from '../server/merge';

describe('the budget table (spec §1 "History compaction")', () => {
  describe('one segment: 25 % of its source estimate, at least 128, at most min(4 % of the effective window, 2,048)', () => {
    it.each([
      ['the target: 25 % of the source', 2_000, 100_000, 500],
      ['the lower bound: 128', 100, 100_000, 128],
      ['the upper bound: 4 % of the effective window', 40_000, 20_000, 800],
      ['the upper bound: 2,048 however large the window', 100_000, 200_000, 2_048],
      ['4 % of a window under 3,200 is under 128: the lower bound wins', 10_000, 2_000, 128],
      ['never more than all summaries together (a window under 128)', 10_000, 100, 100],
    ])('%s', (_, source, effective, expected) => {
      expect(segmentBudget(source, effective)).toBe(expected);
    });

    it('the bounds are exact at the edges', () => {
      expect(segmentBudget(512, 100_000)).toBe(128); // 25 % = 128
      expect(segmentBudget(516, 100_000)).toBe(129);
      expect(segmentCap(51_200)).toBe(2_048); // 4 % = 2,048
      expect(segmentCap(51_175)).toBe(2_047);
      expect(segmentCap(3_200)).toBe(128);
      expect(segmentCap(3_225)).toBe(129);
    });
  });

  describe('all summaries: 12 % of the effective window, at least 128, at most 8,192 and never more than the window', () => {
    it.each([
      ['the target: 12 % of the window', 50_000, 6_000],
      ['the lower bound: 128', 500, 128],
      ['the upper bound: 8,192', 100_000, 8_192],
      ['never more than the window itself', 100, 100],
      ['no window, no budget', 0, 0],
    ])('%s', (_, effective, expected) => {
      expect(totalBudget(effective)).toBe(expected);
    });

    it('the bounds are exact at the edges', () => {
      expect(totalBudget(68_266)).toBe(8_191);
      expect(totalBudget(68_267)).toBe(8_192);
      expect(totalBudget(1_066)).toBe(128); // 12 % = 127
      expect(totalBudget(1_075)).toBe(129);
    });
  });

  it('with old segments a new segment holds at most half the total: the small-window split (binds only under 2,134 tokens)', () => {
    expect(newSegmentBudget(10_000, 1_500, false)).toBe(128);
    expect(newSegmentBudget(10_000, 1_500, true)).toBe(90); // total 180
    expect(newSegmentBudget(10_000, 2_133, true)).toBe(127);
    expect(newSegmentBudget(10_000, 2_134, true)).toBe(128);
    for (const effective of [2_134, 3_200, 20_000, 51_200, 68_267, 1_000_000])
      expect(newSegmentBudget(1_000_000, effective, true)).toBe(segmentBudget(1_000_000, effective));
  });
});

describe('the merge plan (by the new segment length actually written)', () => {
  const limits = { total: 6_000, cap: 2_000 };

  it('keeps every old segment while the total and the count allow', () => {
    expect(planMerge([2_000, 2_000, 1_500], 500, limits)).toEqual({ kind: 'keep' });
    expect(planMerge(Array(7).fill(100), 100, limits)).toEqual({ kind: 'keep' });
  });

  it('over the total: the two oldest merge into what the total leaves, at most one segment', () => {
    expect(planMerge([2_000, 2_000, 1_500], 501, limits)).toEqual({ kind: 'merge', count: 2, budget: 2_000 });
    expect(planMerge([1_000, 1_000, 1_000, 2_900], 500, limits)).toEqual({ kind: 'merge', count: 2, budget: 1_600 });
  });

  it('more merged segments when two leave too little room', () => {
    expect(planMerge([300, 300, 3_000, 2_700], 200, limits)).toEqual({ kind: 'merge', count: 3, budget: 2_000 }); // two: 100 left
  });

  it('over eight segments: the two oldest merge, at most what they hold', () => {
    expect(planMerge(Array(8).fill(100), 100, limits)).toEqual({ kind: 'merge', count: 2, budget: 200 });
    expect(planMerge(Array(8).fill(10), 10, limits)).toEqual({ kind: 'merge', count: 2, budget: 128 });
  });

  it('a single old segment is written again, shorter', () => {
    expect(planMerge([5_800], 500, limits)).toEqual({ kind: 'merge', count: 1, budget: 2_000 });
    expect(planMerge([100], 85, { total: 180, cap: 128 })).toEqual({ kind: 'merge', count: 1, budget: 95 });
  });
});
