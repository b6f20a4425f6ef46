import { join } from 'node:path';
import { createPluginHarness, type PluginHarness } from '../../../libs/plugins-sdk/testing';

jest.setTimeout(60_000);

describe('narrator (contract, through the engine)', () => {
  let h: PluginHarness;
  beforeAll(async () => {
    h = await createPluginHarness({
      builtins: true,
      world: join(__dirname, '..', '..', '..', 'worlds', 'emberback'),
      locale: 'zh-CN',
      replies: { 'narrator/narrator': '你推开了门。' },
    });
  });
  afterAll(() => h.close());

  it('tells the turn in the session locale with its stable style segment in the system prompt; the request rebuilds identically', async () => {
    const turn = await h.turn('我推开门');
    const request = turn.request('narrator');
    expect(request.section('runtime-body')).toMatch(/叙述者/);
    // a stable system-role pre-history segment is placed in the system prompt's segments section (spec §2)
    expect(request.segmentsOf('narrator').map((s) => [s.id, s.placement])).toEqual([['narrative-style', 'system-prompt']]);
    expect(request.section('segments')).toContain('保持叙述者视角一致。');
    expect(request.section('worldinfo-before')).toContain('Emberback');
    expect(turn.story).toBe('你推开了门。');
    expect(await h.audit()).toMatchObject({ identical: true });
  });
});
