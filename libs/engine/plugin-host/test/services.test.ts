import type { HandlerContext, PluginApi } from '../../../plugins-sdk';
import { emptyPluginData, handlerContext, pluginSdk } from '../handler-context';
import { executionInvoker } from '../invoke';
import { ExtensionRegistry } from '../registry';
import { LiveResolver, RecordedResolver } from '../resolver';

const scope = { tenantId: 't', sessionId: 's', turnNumber: 1, locale: 'en' as const, world: null };

/** Registers plugins in the given (plugin id) order, as `loadPluginEntries` does. */
function registryOf(register: Record<string, (api: PluginApi) => void>): ExtensionRegistry {
  const registry = new ExtensionRegistry();
  for (const id of Object.keys(register).sort()) register[id](registry.apiFor(id, pluginSdk));
  return registry;
}

const block = (id: string) => ({ blocks: [{ id, label: id.toUpperCase(), limit: 10 }] });

describe('ctx.services (a plugin reads a service point’s providers)', () => {
  it('answers every provider in plugin id order with the host-set providerPluginId; the results are recorded and replayed', async () => {
    let calls = 0;
    let seen: unknown;
    const registry = registryOf({
      zeta: (api) => api.provideExtension('memory.block-definitions@1', 'z-blocks', { handler: () => (calls++, block('zeta-notes')) }),
      alpha: (api) => api.provideExtension('memory.block-definitions@1', 'a-blocks', { handler: () => (calls++, block('alpha-notes')) }),
      reader: (api) =>
        api.provideExtension('prompt.segment@1', 'blocks', {
          async handler(_input, ctx) {
            const answers = await ctx.services('memory.block-definitions@1');
            seen = answers;
            return [
              { id: 'b', content: answers.map((a) => `${a.providerPluginId}:${a.result.blocks[0].id}`).join(','), position: 'system', volatility: 'turn' },
            ];
          },
        }),
    });
    const [reader] = registry.providers('prompt.segment@1');
    const live = new LiveResolver(new Map(), executionInvoker(scope, { timeoutMs: 1000, pluginData: emptyPluginData, registry }));
    const first = await live.resolve(reader, { playerInput: { text: 'x' } });
    expect(first).toEqual([expect.objectContaining({ content: 'alpha:alpha-notes,zeta:zeta-notes' })]);
    expect(seen).toEqual([
      { providerPluginId: 'alpha', id: 'a-blocks', result: { blocks: [{ id: 'alpha-notes', label: 'ALPHA-NOTES', limit: 10 }] } },
      { providerPluginId: 'zeta', id: 'z-blocks', result: { blocks: [{ id: 'zeta-notes', label: 'ZETA-NOTES', limit: 10 }] } },
    ]);
    // each provider's result is recorded like any extension result (before the reader's own)
    expect(live.fresh.map((r) => [r.point, r.pluginId, r.extensionId])).toEqual([
      ['memory.block-definitions@1', 'alpha', 'a-blocks'],
      ['memory.block-definitions@1', 'zeta', 'z-blocks'],
      ['prompt.segment@1', 'reader', 'blocks'],
    ]);
    // a second resolver of the execution reuses the recorded service results: no provider runs again
    const recorded = new Map(live.fresh.filter((r) => r.point !== 'prompt.segment@1').map((r) => [r.key, r.result]));
    const again = new LiveResolver(recorded, executionInvoker(scope, { timeoutMs: 1000, pluginData: emptyPluginData, registry }));
    expect(await again.resolve(reader, { playerInput: { text: 'x' } })).toEqual(first);
    expect(calls).toBe(2);
    // replay reads the recorded results only
    const replay = new RecordedResolver('e', new Map(live.fresh.map((r) => [r.key, r.result])));
    expect(await replay.resolve(reader, { playerInput: { text: 'x' } })).toEqual(first);
    expect(calls).toBe(2);
  });

  it('a provider whose result does not match the point’s schema fails the call, naming plugin, point and id', async () => {
    const registry = registryOf({
      bad: (api) => api.provideExtension('memory.block-definitions@1', 'broken', { handler: () => ({ blocks: [{ id: 'x', label: 'X', limit: -1 }] }) }),
      reader: (api) =>
        api.provideExtension('prompt.segment@1', 'blocks', {
          async handler(_input, ctx) {
            await ctx.services('memory.block-definitions@1');
            return [];
          },
        }),
    });
    const reader = registry.providers('prompt.segment@1')[0];
    const live = new LiveResolver(new Map(), executionInvoker(scope, { timeoutMs: 1000, pluginData: emptyPluginData, registry }));
    await expect(live.resolve(reader, { playerInput: { text: 'x' } })).rejects.toThrow(
      /plugin bad: memory.block-definitions@1 "broken" returned an invalid result: blocks.0.limit/,
    );
  });

  it('refuses a point that is not a service, and a call from inside a service provider (no nesting)', async () => {
    let inner: unknown;
    const registry = registryOf({
      loop: (api) =>
        api.provideExtension('memory.block-definitions@1', 'self', {
          async handler(_input, ctx) {
            inner = await ctx.services('memory.block-definitions@1').catch((e: Error) => e.message);
            return { blocks: [] };
          },
        }),
      reader: (api) =>
        api.provideExtension('prompt.segment@1', 'blocks', {
          async handler(_input, ctx) {
            const wrong = await (ctx.services as (p: string) => Promise<unknown>)('prompt.segment@1').catch((e: Error) => e.message);
            const answers = await ctx.services('memory.block-definitions@1');
            return [{ id: 'b', content: `${String(wrong)} | ${answers.length}`, position: 'system', volatility: 'turn' }];
          },
        }),
    });
    const reader = registry.providers('prompt.segment@1')[0];
    const live = new LiveResolver(new Map(), executionInvoker(scope, { timeoutMs: 1000, pluginData: emptyPluginData, registry }));
    const [segment] = (await live.resolve(reader, { playerInput: { text: 'x' } })) as { content: string }[];
    expect(segment.content).toBe('plugin reader: ctx.services: "prompt.segment@1" is not a service point (memory.block-definitions@1) | 1');
    expect(inner).toBe('plugin loop: ctx.services: a provider of a service point (memory.block-definitions@1) cannot call ctx.services');
  });

  it('a context made without a registry refuses the call', async () => {
    const ctx: HandlerContext = handlerContext(scope, 'p', emptyPluginData);
    await expect(ctx.services('memory.block-definitions@1')).rejects.toThrow('plugin p: ctx.services: not available in this context');
  });
});
