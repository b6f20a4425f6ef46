import { clipLine } from '../../../libs/plugins-sdk';
import { codexSummary } from '../server/summary';

const sdk = { clipLine };

describe('codex: the summary of a write', () => {
  it('speaks zh-Hans: new and updated entries, and no change', () => {
    expect(
      codexSummary(
        sdk,
        [
          { term: '煤黑账本', added: true },
          { term: '灰烬河', added: false },
        ],
        'zh-Hans',
      ),
    ).toBe('词条：煤黑账本（新）、灰烬河（更新）');
    expect(codexSummary(sdk, [], 'zh-Hans')).toBeUndefined();
  });

  it('keeps the line within 200 code points', () => {
    const entries = Array.from({ length: 10 }, () => ({ term: '🐉'.repeat(70), added: true }));
    expect(Array.from(codexSummary(sdk, entries, 'en')!).length).toBe(200);
  });
});
