import { blockOf, TRACKER, trackerTurn, worldInitHarness } from './support';

jest.setTimeout(120_000);

const season = {
  name: 'Season',
  schema: { type: 'string', enum: ['late autumn', 'winter'], 'x-i18n': { 'zh-Hans': { 'late autumn': '深秋', winter: '冬天' } } },
  value: 'late autumn',
  updateRule: 'Move to winter when the snows close the road.',
};
const mood = { name: 'Mood', schema: { type: 'string' }, value: 'late autumn', updateRule: 'Rewrite it when the village talks.' };

describe('world-init in Simplified Chinese (zh-CN session)', () => {
  it('Chinese segment text and tracker body; values localized only where the schema carries x-i18n, and only for the story', async () => {
    const h = await worldInitHarness({
      world: { name: '余烬背', lore: '一个建在龙背上的村子。', dimensions: { season, mood } },
      locale: 'zh-CN',
      replies: { [TRACKER]: trackerTurn([{ id: 'season', value: 'winter' }]), default: '雪落在梯田上。' },
    });
    try {
      const one = await h.turn('我看着天空');
      expect(one.request('narrator').systemPrompt).toContain(
        '玩家输入之前的系统消息中的 <world-dimensions>：本回合开始时的世界维度（本回合内只读），每行一个：id、版本和值（JSON）。',
      );
      expect(blockOf(one.request('narrator').turnContext, 'world-dimensions').split('\n')).toEqual([
        '<world-dimensions>',
        '- mood (v1): "late autumn"', // plain JSON is not guessed to be translated
        '- season (v1): "深秋"',
        '</world-dimensions>',
      ]);
      const tracker = one.request('world-init', 'dimension-tracker');
      expect(tracker.section('runtime-body')).toContain('你负责让世界维度保持最新。');
      const rules = blockOf(tracker.systemPrompt, 'dimension-rules');
      expect(rules).toContain('被追踪的维度：');
      expect(rules).toContain(
        '\n玩家输入之前的系统消息中的 <dimension-values>：每个被追踪维度的当前值（本回合内冻结），每行一个：id: 值（JSON）。\n</dimension-rules>',
      );
      expect(rules).toContain('  规则: Move to winter when the snows close the road.');
      // the tracker writes raw values: it reads them raw
      expect(blockOf(tracker.turnContext, 'dimension-values').split('\n')).toEqual([
        '<dimension-values>',
        'mood: "late autumn"',
        'season: "late autumn"',
        '</dimension-values>',
      ]);
      const two = await h.turn('我等待');
      expect(two.request('narrator').turnContext).toContain('- season (v2): "冬天"\n');
    } finally {
      await h.close();
    }
  });
});
