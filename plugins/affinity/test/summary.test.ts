import { clipLine, type WorldView } from '../../../libs/plugins-sdk';
import { affinitySummary } from '../server/summary';

const sdk = { clipLine };

const world = { characters: [{ id: 'mira', name: '米拉' }] } as unknown as WorldView;

describe('affinity: the summary of a write', () => {
  it('speaks zh-Hans, the character by name', () => {
    expect(affinitySummary(sdk, [{ character: 'mira', score: 2, feeling: '对信使感到好奇' }], world, 'zh-Hans')).toBe('米拉：2（对信使感到好奇）');
    expect(affinitySummary(sdk, [], world, 'zh-Hans')).toBeUndefined();
  });

  it('cuts a long feeling and the line by code points (at most 200)', () => {
    const written = Array.from({ length: 5 }, () => ({ character: 'mira', score: 1, feeling: '🔥'.repeat(100) }));
    expect(affinitySummary(sdk, written.slice(0, 1), world, 'en')).toBe(`米拉: 1 (${'🔥'.repeat(59)}…)`);
    expect(Array.from(affinitySummary(sdk, written, world, 'en')!).length).toBe(200);
  });
});
