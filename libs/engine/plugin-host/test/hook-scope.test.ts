import { buildContext } from '../../../context';
import { params } from '../../../context/test/fixtures';
import type { ChatMessage } from '../../../providers';
import { PluginEntryError } from '../../errors';
import { ExtensionRegistry, pluginSdk, type RegisteredHook } from '..';
import { postContextHooks, preLlmCall, type RequestPlugins } from '../request-extensions';

/** Plugin `keeper` hooks its own runtimes' requests only, `watcher` every runtime's. */
function registry(): ExtensionRegistry {
  const r = new ExtensionRegistry();
  const keeper = r.apiFor('keeper', pluginSdk);
  keeper.hook('PostContextAssembly', () => ({ messages: [{ role: 'user', content: 'own request' }] }), { runtimes: 'own' });
  keeper.hook('PreLLMCall', () => null, { runtimes: 'own' });
  r.apiFor('watcher', pluginSdk).hook('PreLLMCall', () => null);
  return r;
}

/** A resolver that records which hooks it was asked about and answers null. */
function asking(r: ExtensionRegistry): RequestPlugins & { asked: string[] } {
  const asked: string[] = [];
  return {
    registry: r,
    asked,
    resolver: {
      resolve: async (entry) => {
        asked.push(`${entry.pluginId}/${(entry as RegisteredHook).id}`);
        return null;
      },
    },
  };
}

describe("a hook's runtimes (hook(name, fn, { runtimes: 'own' }), issue 33)", () => {
  const own = { pluginId: 'keeper', runtimeId: 'ledger' };
  const other = { pluginId: 'narrator', runtimeId: 'narrator' };
  const messages: ChatMessage[] = [
    { role: 'system', content: 'system' },
    { role: 'user', content: 'go north' },
  ];

  it("is listed for its own plugin's runtimes only; without a runtime every hook is listed", () => {
    const r = registry();
    const ids = (hooks: readonly RegisteredHook[]) => hooks.map((h) => `${h.pluginId}/${h.id}`);
    expect(ids(r.hooksOf('PreLLMCall', own))).toEqual(['keeper/PreLLMCall#0', 'watcher/PreLLMCall#0']);
    expect(ids(r.hooksOf('PreLLMCall', other))).toEqual(['watcher/PreLLMCall#0']);
    expect(ids(r.hooksOf('PostContextAssembly', other))).toEqual([]);
    expect(ids(r.hooksOf('PreLLMCall'))).toEqual(['keeper/PreLLMCall#0', 'watcher/PreLLMCall#0']);
  });

  it("another runtime's request never asks it (nothing run, nothing recorded); its own runtime's does", async () => {
    const forOther = asking(registry());
    await preLlmCall(forOther, other, 'm', messages);
    const assembled = await buildContext(params());
    expect(await postContextHooks(forOther, params(), assembled, other)).toEqual([]);
    expect(forOther.asked).toEqual(['watcher/PreLLMCall#0']);

    const forOwn = asking(registry());
    await preLlmCall(forOwn, own, 'm', messages);
    expect(await postContextHooks(forOwn, params(), assembled, own)).toHaveLength(1);
    expect(forOwn.asked).toEqual(['keeper/PreLLMCall#0', 'watcher/PreLLMCall#0', 'keeper/PostContextAssembly#0']);
  });

  it('a runtimes option other than own or all stops start-up', () => {
    const api = new ExtensionRegistry().apiFor('keeper', pluginSdk);
    expect(() => api.hook('PreLLMCall', () => null, { runtimes: 'mine' as 'own' })).toThrow(PluginEntryError);
    expect(() => api.hook('PreLLMCall', () => null, { runtimes: 'all' })).not.toThrow();
  });
});
