import { PluginHandlerError } from '../../errors';
import { emptyPluginData } from '../handler-context';
import { createHash } from 'node:crypto';
import { canonicalJson, inputHash } from '../../journal/input-hash';
import { executionInvoker } from '../invoke';
import type { RegisteredExtension } from '../registry';
import { LiveResolver, RecordedResolver, resolveShared } from '../resolver';

const scope = { tenantId: 't', sessionId: 's', turnNumber: 3, locale: 'en' as const, world: null };

function segmentProvider(handler: (input: unknown) => unknown): RegisteredExtension {
  return { point: 'prompt.segment@1', pluginId: 'status', id: 'status', handler: handler as RegisteredExtension['handler'] };
}

describe('resolving handler results', () => {
  it('the input hash ignores key order and tells different inputs apart (Unicode included)', () => {
    expect(inputHash({ a: 1, b: { c: '火', d: [1, 2] } })).toBe(inputHash({ b: { d: [1, 2], c: '火' }, a: 1 }));
    expect(inputHash({ text: '火' })).not.toBe(inputHash({ text: '灯' }));
  });

  it('the input hash is the SHA-256 of the canonical JSON, short (kept) and long inputs alike, asked again or not', () => {
    const sha = (input: unknown) => createHash('sha256').update(canonicalJson(input)).digest('hex');
    const short = { playerInput: { text: 'Listen for the bell 🔔' } };
    const long = { messages: Array.from({ length: 200 }, (_, i) => ({ role: 'user', text: `message ${i} 火` })) };
    for (const input of [short, short, long, long, {}]) expect(inputHash(input)).toBe(sha(input));
    expect(inputHash({ playerInput: { text: 'Listen for the bell' } })).not.toBe(inputHash(short));
  });

  it('resolveShared: the parse of the same recorded text, one frozen value for every resolver; resolve a copy of its own', async () => {
    let reply = 'a';
    const provider = segmentProvider(() => [{ id: 'a', content: reply, position: 'system', volatility: 'turn' }]);
    const live = new LiveResolver(new Map(), executionInvoker(scope, { timeoutMs: 1000, pluginData: emptyPluginData }));
    const input = { playerInput: { text: 'x' } };
    const shared = await live.resolveShared(provider, input);
    expect(shared).toEqual(await live.resolve(provider, input));
    expect(Object.isFrozen(shared) && Object.isFrozen((shared as object[])[0])).toBe(true);
    // another runtime of the execution, and a rebuild: the recorded text, the same value
    const recorded = new Map(live.fresh.map((r) => [r.key, r.result]));
    const sibling = new LiveResolver(recorded, executionInvoker(scope, { timeoutMs: 1000, pluginData: emptyPluginData }));
    expect(await sibling.resolveShared(provider, input)).toBe(shared);
    expect(await new RecordedResolver('e', recorded).resolveShared(provider, input)).toBe(shared);
    expect(await resolveShared(sibling, provider, input)).toBe(shared);
    // what plugin code gets (ctx.services goes through resolve) is its own, changeable copy
    const own = (await sibling.resolve(provider, input)) as { content: string }[];
    expect(Object.isFrozen(own)).toBe(false);
    own[0].content = 'changed';
    expect((shared as { content: string }[])[0].content).toBe('a');
    // another execution whose handler answered otherwise: its text, its value
    reply = 'b';
    const next = new LiveResolver(new Map(), executionInvoker(scope, { timeoutMs: 1000, pluginData: emptyPluginData }));
    expect(((await next.resolveShared(provider, input)) as { content: string }[])[0].content).toBe('b');
    // a resolver without resolveShared: resolve
    expect(await resolveShared({ resolve: async () => 'plain' }, provider, input)).toBe('plain');
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
