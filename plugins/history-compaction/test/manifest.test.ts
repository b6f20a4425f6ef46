import { loadPlugin } from '../../../libs/plugins-sdk';
import { loadProvider, PLUGIN_ROOT } from './support';

describe('history-compaction plugin', () => {
  it('declares one history.compact@2 provider and no runtime', () => {
    const plugin = loadPlugin(PLUGIN_ROOT);
    expect(plugin.manifest.id).toBe('history-compaction');
    expect(plugin.runtimes).toEqual([]);
    expect(plugin.manifest.contributes.extensions).toEqual([{ point: 'history.compact@2', id: 'summaries' }]);
    expect(plugin.entry).toBe(`${PLUGIN_ROOT}/server/index.ts`);
  });

  it("register(api) provides it, as the engine's start-up loads it (declared and registered agree)", async () => {
    const { provider } = await loadProvider();
    expect(provider).toMatchObject({ point: 'history.compact@2', pluginId: 'history-compaction', id: 'summaries' });
  });
});
