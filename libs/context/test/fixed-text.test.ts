import { buildContext } from '..';
import type { ActivatedLoreEntry } from '..';
import { params } from './fixtures';

const lore = (id: string, position: ActivatedLoreEntry['position'], content: string): ActivatedLoreEntry => ({
  id,
  content,
  position,
  order: 0,
  reason: { kind: 'constant' },
});

/** A request with world rules before and after the plugin segments and a saved summary, in `locale`. */
const assemble = (locale: 'en' | 'zh-Hans') =>
  buildContext(
    params({
      locale,
      lorebook: [lore('before', 'before-plugin', '<world-lore>\n码头 & quay\n</world-lore>'), lore('after', 'after-plugin', 'The bells ring at every tide.')],
      summaries: [{ id: 's1', content: '早些时候，钟声响了。' }],
    }),
  );

const section = (ctx: Awaited<ReturnType<typeof assemble>>, name: string) => ctx.systemSections.find((s) => s.name === name)!.text;
const summaryMessage = (ctx: Awaited<ReturnType<typeof assemble>>) => ctx.messages[ctx.messageSections.indexOf('summary')].content;

describe('§6 fixed text the code writes: the world-rules title and the note after the summary, in the instruction language', () => {
  it('a Simplified Chinese session reads both in Chinese; the entries and the tag names stay as they are', async () => {
    const ctx = await assemble('zh-Hans');
    expect(section(ctx, 'worldinfo-before')).toBe('世界规则:\n\n<world-lore>\n码头 & quay\n</world-lore>');
    expect(section(ctx, 'worldinfo-after')).toBe('世界规则:\n\nThe bells ring at every tide.');
    expect(summaryMessage(ctx)).toBe(
      '<compacted_history>\n早些时候，钟声响了。\n</compacted_history>\n\n上面的内容概括了本故事较早的部分，这些部分不再完整显示。',
    );
  });

  it('every other session reads them in English', async () => {
    const ctx = await assemble('en');
    expect(section(ctx, 'worldinfo-before')).toBe('World rules:\n\n<world-lore>\n码头 & quay\n</world-lore>');
    expect(section(ctx, 'worldinfo-after')).toBe('World rules:\n\nThe bells ring at every tide.');
    expect(summaryMessage(ctx)).toBe(
      '<compacted_history>\n早些时候，钟声响了。\n</compacted_history>\n\nThe block above summarizes earlier parts of this story, which are no longer shown in full.',
    );
  });
});
