import { join } from 'node:path';
import { loadPlugin, parsePluginFile, PluginManifestError } from '../../../libs/plugins-sdk';

describe('narrator plugin manifest', () => {
  it('loads with one story runtime in the narrative stage and both locales', () => {
    const plugin = loadPlugin(join(__dirname, '..'));
    expect(plugin.manifest.id).toBe('narrator');
    expect(plugin.runtimes).toHaveLength(1);
    const [runtime] = plugin.runtimes;
    expect(runtime).toMatchObject({ id: 'narrator', fullId: 'narrator/narrator', inline: true });
    expect(runtime.manifest).toMatchObject({
      type: 'agent',
      schedule: { stage: 'narrative', trigger: 'auto' },
      outputKind: 'story',
      output: { contract: 'narrative-engine@2' },
      agent: { slot: 'story' },
    });
    expect(plugin.entry).toBe(join(__dirname, '..', 'server', 'index.ts'));
    expect(plugin.manifest.enabledByDefault).toBe(true);
    expect(plugin.manifest.contributes.extensions).toEqual([{ point: 'prompt.segment@1', id: 'character-sheets' }]);
    expect(runtime.bodies.en).toMatch(/narrator of an interactive story/);
    expect(runtime.bodies['zh-Hans']).toMatch(/叙述者/);
  });

  it('a bad manifest names the field', () => {
    expect(() => parsePluginFile('---\nid: Bad Id\nname: x\nversion: "1"\n---\nbody')).toThrow(PluginManifestError);
    expect(() => parsePluginFile('---\nid: ok\nversion: "1"\n---\nbody')).toThrow(/name/);
  });
});
