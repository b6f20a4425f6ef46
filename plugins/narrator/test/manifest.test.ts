import { join } from 'node:path';
import { loadPlugin, parsePluginFile, PluginManifestError } from '../../../libs/plugins-sdk';

describe('narrator plugin manifest', () => {
  it('loads with one story runtime in the narrative stage and both locales', () => {
    const plugin = loadPlugin(join(__dirname, '..'));
    expect(plugin.manifest.id).toBe('narrator');
    expect(plugin.manifest.runtimes).toEqual([expect.objectContaining({ id: 'narrator', stage: 'narrative', outputKind: 'story', slot: 'story' })]);
    expect(plugin.bodies.en).toMatch(/narrator of an interactive story/);
    expect(plugin.bodies['zh-Hans']).toMatch(/叙述者/);
  });

  it('a bad manifest names the field', () => {
    expect(() => parsePluginFile('---\nid: Bad Id\nname: x\nversion: "1"\n---\nbody')).toThrow(PluginManifestError);
    expect(() => parsePluginFile('---\nid: ok\nversion: "1"\n---\nbody')).toThrow(/name/);
  });
});
