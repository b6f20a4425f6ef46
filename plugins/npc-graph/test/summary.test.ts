import { clipLine, type WorldView } from '../../../libs/plugins-sdk';
import { relationsSummary } from '../server/summary';

const sdk = { clipLine };

const world = {
  characters: [
    { id: 'tomas', name: '托马斯' },
    { id: 'ash', name: '阿什' },
  ],
} as unknown as WorldView;

describe('npc-graph: the summary of a write', () => {
  it('speaks zh-Hans, characters by name: a set, a removal, and no change', () => {
    expect(
      relationsSummary(
        sdk,
        [
          { from: 'tomas', to: 'ash', relation: '盯着信使' },
          { from: 'ash', to: 'tomas', relation: null },
        ],
        world,
        'zh-Hans',
      ),
    ).toBe('托马斯 → 阿什：盯着信使；阿什 → 托马斯：（已移除）');
    expect(relationsSummary(sdk, [], world, 'zh-Hans')).toBeUndefined();
  });

  it('keeps the line within 200 code points', () => {
    const written = Array.from({ length: 6 }, () => ({ from: 'tomas', to: 'ash', relation: '🐉'.repeat(100) }));
    expect(Array.from(relationsSummary(sdk, written, world, 'en')!).length).toBe(200);
  });
});
