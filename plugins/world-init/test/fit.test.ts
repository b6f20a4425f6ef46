import { cutTo, fitLines, type FitItem } from '../server/fit';
import { localizeValue } from '../server/localize';
import { segmentText } from '../server/text';

const item = (id: string, full: string): FitItem => ({ id, full, line: (v, preview) => `${id}${preview ? '*' : ''}:${v}` });
const frame = (lines: string[], cut: number, omitted: number) => [...lines, `cut=${cut}`, `omitted=${omitted}`].join('\n');

describe('fitting values into a budget (code points)', () => {
  it('cuts by code points, never inside a surrogate pair, with an ellipsis', () => {
    expect(cutTo('🐉🐉🐉', 2)).toBe('🐉🐉…');
    expect(cutTo('龙龙', 2)).toBe('龙龙');
    expect(cutTo('a👨‍👩‍👧b', 2)).toBe('a👨…');
  });

  it('all whole when they fit; else the longest first, ties by id; then the last items left out', () => {
    const items = [item('a', 'x'.repeat(50)), item('b', 'y'.repeat(60)), item('c', 'z'.repeat(5))];
    expect(fitLines(items, { budget: 1_000, cutLength: 10, frame })).toEqual({
      lines: [`a:${'x'.repeat(50)}`, `b:${'y'.repeat(60)}`, `c:zzzzz`],
      cut: [],
      omitted: [],
    });
    const cutOne = fitLines(items, { budget: 100, cutLength: 10, frame });
    expect(cutOne.cut).toEqual(['b']);
    expect(cutOne.lines[1]).toBe(`b*:${'y'.repeat(10)}…`);
    const cutBoth = fitLines(items, { budget: 60, cutLength: 10, frame });
    expect(cutBoth.cut).toEqual(['a', 'b']);
    const omitted = fitLines(items, { budget: 30, cutLength: 10, frame });
    expect(omitted.omitted.length).toBeGreaterThan(0);
    expect(omitted.lines.length + omitted.omitted.length).toBe(3);
  });
});

describe('x-i18n', () => {
  it('localizes only annotated string nodes, through properties and items; never changes the source', () => {
    const schema = {
      type: 'object',
      properties: {
        weather: { type: 'string', 'x-i18n': { 'zh-Hans': { snow: '雪' } } },
        tags: { type: 'array', items: { type: 'string', 'x-i18n': { 'zh-Hans': { cold: '冷' } } } },
        note: { type: 'string' },
      },
    };
    const value = { weather: 'snow', tags: ['cold', 'dark'], note: 'snow' };
    expect(localizeValue(value, schema, 'zh-Hans')).toEqual({ weather: '雪', tags: ['冷', 'dark'], note: 'snow' });
    expect(localizeValue(value, schema, 'en')).toEqual(value);
    expect(value.weather).toBe('snow');
  });

  it('the stated count reads in both languages', () => {
    expect(segmentText('en').omitted(1)).toMatch(/^1 more dimension is not shown here/);
    expect(segmentText('zh-Hans').omitted(3)).toMatch(/^还有 3 个维度因篇幅所限未在此列出.*world-dimension-list.*world-dimension-get/);
  });
});
