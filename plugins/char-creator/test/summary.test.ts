import { clipLine } from '../../../libs/plugins-sdk';
import { createdSummary, updatedSummary } from '../server/summary';

const sdk = { clipLine };

const mira = { name: '米拉', type: 'npc', description: '摆渡人', fields: { trust: 2, status: '补网' } };

describe('char-creator: the summary of a write', () => {
  it('speaks zh-Hans: a new character, changed fields in the schema order, and no change', () => {
    expect(createdSummary(sdk, '盐商', 'zh-Hans')).toBe('新角色：盐商');
    const after = { ...mira, fields: { status: '送信使过河', trust: 3 } };
    expect(updatedSummary(sdk, [{ before: mira, after }], ['trust', 'status'], 'zh-Hans')).toBe('米拉：trust 2 → 3，status 补网 → 送信使过河');
    expect(updatedSummary(sdk, [{ before: mira, after: mira }], ['trust', 'status'], 'zh-Hans')).toBeUndefined();
  });

  it('cuts long values and the whole line by code points (at most 200)', () => {
    const after = { ...mira, fields: { ...mira.fields, status: '🐉'.repeat(100) } };
    expect(updatedSummary(sdk, [{ before: mira, after }], [], 'en')).toBe(`米拉: status 补网 → ${'🐉'.repeat(39)}…`);
    const many = Array.from({ length: 10 }, () => ({ before: mira, after }));
    const line = updatedSummary(sdk, many, [], 'en')!;
    expect(Array.from(line).length).toBe(200);
    expect(line.endsWith('…')).toBe(true);
  });
});
