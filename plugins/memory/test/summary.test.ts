import { clipLine } from '../../../libs/plugins-sdk';
import { editSummary } from '../server/summary';

const sdk = { clipLine };

describe('memory: the summary of an edit', () => {
  it('cuts a long line to 80 code points with an ellipsis, never inside a surrogate pair', () => {
    const line = `${'🐉'.repeat(79)}火火`;
    const summary = editSummary(sdk, 'Omens', { kind: 'append', line }, 'en');
    expect(summary).toBe(`Omens: + ${'🐉'.repeat(79)}…`);
  });

  it('speaks zh-Hans: the label, a replace and a clear', () => {
    expect(editSummary(sdk, '信使笔记', { kind: 'replace', old: '答应了米拉', new: '已经把信交给了米拉' }, 'zh-Hans')).toBe(
      '信使笔记：答应了米拉 → 已经把信交给了米拉',
    );
    expect(editSummary(sdk, '信使笔记', { kind: 'clear' }, 'zh-Hans')).toBe('信使笔记：已清空');
  });

  it('keeps a summary within 200 code points', () => {
    const summary = editSummary(sdk, 'x'.repeat(300), { kind: 'replace', old: 'y'.repeat(300), new: 'z'.repeat(300) }, 'en');
    expect(Array.from(summary).length).toBeLessThanOrEqual(200);
  });
});
