import { PluginHandlerError } from '../../errors';
import { emptyPluginData } from '../handler-context';
import { inputHash } from '../../journal/input-hash';
import { executionInvoker } from '../invoke';
import type { RegisteredExtension } from '../registry';
import { LiveResolver, RecordedResolver } from '../resolver';

const scope = { tenantId: 't', sessionId: 's', turnNumber: 3, locale: 'en' as const, world: null };

function segmentProvider(handler: (input: unknown) => unknown): RegisteredExtension {
  return { point: 'prompt.segment@1', pluginId: 'status', id: 'status', handler: handler as RegisteredExtension['handler'] };
}

describe('resolving handler results', () => {
  it('the input hash ignores key order and tells different inputs apart (Unicode included)', () => {
    expect(inputHash({ a: 1, b: { c: '火', d: [1, 2] } })).toBe(inputHash({ b: { d: [1, 2], c: '火' }, a: 1 }));
    expect(inputHash({ text: '火' })).not.toBe(inputHash({ text: '灯' }));
  });

  it('a handler answering after the limit fails the runtime; its late result is recorded nowhere', async () => {
    let finish!: (v: unknown) => void;
    const provider = segmentProvider(() => new Promise((resolve) => (finish = resolve)));
    const resolver = new LiveResolver(new Map(), executionInvoker(scope, { timeoutMs: 50, pluginData: emptyPluginData }));
    const outcome = resolver.resolve(provider, { playerInput: { text: 'x' } });
    await expect(outcome).rejects.toMatchObject({ code: 'PLUGIN_HANDLER_TIMEOUT', pluginId: 'status', point: 'prompt.segment@1', extensionId: 'status' });
    finish([{ id: 'late', content: 'too late', position: 'system', volatility: 'turn' }]);
    await new Promise((r) => setTimeout(r, 20));
    expect(resolver.fresh).toEqual([]);
  });

  it('same input: one call, parsed from the recorded JSON text; the recorded resolver never calls a handler', async () => {
    let n = 0;
    const provider = segmentProvider(() => {
      n += 1;
      return [{ id: 'a', content: 'ä\u0000', position: 'system', volatility: 'turn' }];
    });
    const live = new LiveResolver(new Map(), executionInvoker(scope, { timeoutMs: 1000, pluginData: emptyPluginData }));
    const first = await live.resolve(provider, { playerInput: { text: 'x' } });
    expect(await live.resolve(provider, { playerInput: { text: 'x' } })).toEqual(first);
    expect(n).toBe(1);
    expect(first).toEqual([{ id: 'a', content: 'ä\u0000', position: 'system', volatility: 'turn', role: 'system', order: 0 }]);
    const recorded = new RecordedResolver('e', new Map(live.fresh.map((r) => [r.key, r.result])));
    expect(await recorded.resolve(provider, { playerInput: { text: 'x' } })).toEqual(first);
    await expect(recorded.resolve(provider, { playerInput: { text: 'y' } })).rejects.toMatchObject({ code: 'RECORDED_EXTENSION_MISSING' });
    expect(n).toBe(1);
  });

  it('a provider cannot set providerPluginId (the result is refused, naming plugin, point and id)', async () => {
    const provider = segmentProvider(() => [{ id: 'a', content: 'x', position: 'system', volatility: 'turn', providerPluginId: 'other' }]);
    const live = new LiveResolver(new Map(), executionInvoker(scope, { timeoutMs: 1000, pluginData: emptyPluginData }));
    const error = await live.resolve(provider, {}).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PluginHandlerError);
    expect((error as Error).message).toMatch(
      /^plugin status: prompt.segment@1 "status" returned an invalid result: 0.providerPluginId: providerPluginId is set by the host/,
    );
  });
});
