import { advanceSummary } from '../server/summary';

describe('world-time: the summary of an advance', () => {
  it('speaks zh-Hans: within a day, across midnight', () => {
    expect(advanceSummary({ day: 1, minute: 480 }, { day: 1, minute: 510 }, 'zh-Hans')).toBe('第 1 天，08:00 → 08:30');
    expect(advanceSummary({ day: 1, minute: 1410 }, { day: 2, minute: 15 }, 'zh-Hans')).toBe('第 1 天，23:30 → 第 2 天，00:15');
    expect(advanceSummary({ day: 1, minute: 1410 }, { day: 2, minute: 15 }, 'en')).toBe('Day 1, 23:30 → Day 2, 00:15');
  });
});
