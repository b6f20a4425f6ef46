import { join } from 'node:path';
import { createPluginHarness, type PluginHarness } from '../../../libs/plugin-testing';

jest.setTimeout(120_000);

const PLUGINS = [join(__dirname, '..', '..', 'narrator'), join(__dirname, '..'), join(__dirname, 'fixtures', 'omens')];

describe('memory: zh-Hans, another provider of block definitions, limits in code points', () => {
  let h: PluginHarness;
  beforeAll(async () => {
    h = await createPluginHarness({
      plugins: PLUGINS,
      world: {
        id: 'dragon-back',
        name: '龙背村',
        lore: '一座建在沉睡巨龙背上的村子。',
        pluginConfig: { memory: { blocks: [{ id: 'notes', label: '笔记', description: '信使记下的事。', limit: 20 }] } },
      },
      locale: 'zh-CN',
      replies: {
        'narrator/narrator': '烟囱里冒出了蓝烟。🔥',
        'memory/keeper': [
          // refused edits change nothing and do not end the keeper
          { tool: 'memory-append', args: { block: 'nowhere', line: '灯' } },
          // 龙🐉 + \n + 火🔥灯灯 = 7 code points: over the limit of 6
          { tool: 'memory-append', args: { block: 'omens', line: '火🔥灯灯' } },
          // 龙🐉 + \n + 火🔥 = 5 code points (7 UTF-16 units): within the limit; a successful edit ends the keeper
          { tool: 'memory-append', args: { block: 'omens', line: '火🔥' } },
        ],
      },
    });
  });
  afterAll(() => h.close());

  it('collects blocks from every provider (plugin id order: memory, then omens), speaks Chinese, counts characters as code points', async () => {
    const turn = await h.turn('我看向烟囱。');
    const story = turn.request('narrator');
    expect(story.turnContext).toContain(['<memory-blocks>', '<block id="omens" label="征兆 🐉">', '龙🐉', '</block>', '</memory-blocks>'].join('\n'));
    expect(story.systemPrompt).toContain('玩家输入之前的系统消息中的 <memory-blocks> 是贯穿整个故事的记录。');
    const keeper = turn.request('memory', 'keeper');
    expect(keeper.turnContext).toContain('<memory-blocks>\n这些是贯穿整个故事的记录。');
    expect(keeper.section('runtime-body')).toContain('你负责维护故事的记忆块：');
    expect(keeper.systemPrompt).toContain(
      '你维护的记忆块，每行一个：id | 名称 | 字数上限 | 用途。\n- notes | 笔记 | 20 | 信使记下的事。\n- omens | 征兆 🐉 | 6 | 龙的征兆，每行一条。',
    );
    expect(keeper.turnContext).toContain('<block id="omens" label="征兆 🐉" used="2" limit="6">');
    // the empty block: the keeper's view only
    expect(keeper.turnContext).toContain('<block id="notes" label="笔记" used="0" limit="20">\n（空）\n</block>');
    expect(story.turnContext).not.toContain('（空）');

    const results = turn.eventsOf('tool.completed@1').map((e) => ({ ok: e.ok, done: e.done, content: e.content }));
    expect(results.map((r) => [r.ok, r.done])).toEqual([
      [false, undefined],
      [false, undefined],
      [true, true],
    ]);
    expect(results[0].content).toContain('no memory block \\"nowhere\\"; the blocks are: notes, omens');
    expect(results[1].content).toContain('block \\"omens\\" would hold 7 characters, over its limit of 6 (it holds 2 now)');
    // the summary for the player names the block by its label, in the session's language
    expect(results[2].content).toBe(JSON.stringify({ ok: true, data: { block: 'omens', used: 5, limit: 6, summary: '征兆 🐉：+ 火🔥' } }));
    expect(turn.requestsOf('memory', 'keeper')).toHaveLength(3);
    expect(await h.pluginData('memory', 'blocks')).toEqual([expect.objectContaining({ key: 'omens', value: { text: '龙🐉\n火🔥' } })]);

    // the definitions were collected through the service: each provider's result is recorded
    const resolved = turn.eventsOf('extension.resolved@1').filter((e) => e.point === 'memory.block-definitions@1');
    expect(resolved.map((e) => e.pluginId)).toEqual(['memory', 'omens']);
    expect(await h.audit()).toMatchObject({ identical: true });
  });

  it('the next turn shows the kept text whole (never cut inside a surrogate pair)', async () => {
    const turn = await h.turn('继续。');
    expect(turn.request('narrator').turnContext).toContain('<block id="omens" label="征兆 🐉">\n龙🐉\n火🔥\n</block>');
    expect(turn.request('memory', 'keeper').turnContext).toContain('used="5" limit="6"');
  });
});
