import { clipLine } from '../../../libs/plugins-sdk';
import { recordSummary } from '../server/summary';

const sdk = { clipLine };

describe('world-ir: the summary of a write', () => {
  it('speaks zh-Hans: facts counted, new terms named, and nothing new', () => {
    expect(recordSummary(sdk, 2, ['灰烬河'], 'zh-Hans')).toBe('2 条事实，1 个新词汇（灰烬河）');
    expect(recordSummary(sdk, 0, [], 'zh-Hans')).toBeUndefined();
    expect(recordSummary(sdk, 2, ['the ash river', 'the vents'], 'en')).toBe('2 facts, 2 new terms (the ash river, the vents)');
  });

  it('cuts a long list of terms by code points, keeping the closing bracket (at most 200)', () => {
    const line = recordSummary(
      sdk,
      1,
      Array.from({ length: 20 }, () => '🐉'.repeat(20)),
      'en',
    )!;
    expect(Array.from(line).length).toBe(200);
    expect(line.endsWith('…)')).toBe(true);
  });
});
