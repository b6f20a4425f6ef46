import { loadPlugin } from '../../../libs/plugins-sdk';
import { WORLD_INIT } from './support';

describe('world-init plugin manifest', () => {
  const plugin = loadPlugin(WORLD_INIT);

  it('is off by default, provides its segments and the world context, and declares its tools', () => {
    expect(plugin.manifest).toMatchObject({ id: 'world-init', enabledByDefault: false });
    expect(plugin.manifest.contributes.extensions).toEqual([
      { point: 'prompt.segment@1', id: 'dimensions' },
      { point: 'session.world-context@1', id: 'dimensions' },
    ]);
    expect(plugin.manifest.contributes.tools.map((t) => [t.name, t.completesRuntime])).toEqual([
      ['update-dimensions', true],
      ['dimension-rule-get', false],
    ]);
    expect(plugin.entry).toMatch(/server[/\\]index\.ts$/);
  });

  it('publish runs first (pre-turn function); the tracker after the narrative, only when publish says so, maxTurns 1, toolChoice required', () => {
    expect(plugin.runtimes.map((r) => r.fullId)).toEqual(['world-init/dimension-tracker', 'world-init/publish']);
    const publish = plugin.runtimes.find((r) => r.id === 'publish')!;
    expect(publish.manifest).toMatchObject({ type: 'function', schedule: { stage: 'pre-turn', trigger: 'auto' }, outputKind: 'none' });
    const tracker = plugin.runtimes.find((r) => r.id === 'dimension-tracker')!;
    expect(tracker.manifest).toMatchObject({
      type: 'agent',
      schedule: { stage: 'post-turn', trigger: 'auto', when: { runtime: 'world-init/publish', select: '/track' } },
      outputKind: 'none',
      agent: { toolChoice: 'required', reasoning: false, history: { maxTurns: 1 }, tools: ['update-dimensions', 'dimension-rule-get', 'world-dimension-get'] },
    });
    expect(tracker.bodies.en).toMatch(/update-dimensions/);
    expect(tracker.bodies['zh-Hans']).toMatch(/你负责让世界维度保持最新/);
    expect(plugin.bodies['zh-Hans']).toMatch(/世界维度/);
  });
});
