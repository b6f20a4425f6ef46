import { type LoadedWorld, type PluginApi, withPublishedCharacters, WorldManifest } from '../../../plugins-sdk';
import { emptyPluginData, type ExecutionScope, pluginSdk } from '../handler-context';
import { executionInvoker } from '../invoke';
import { publishedCharacters } from '../published-characters';
import { ExtensionRegistry } from '../registry';
import { LiveResolver } from '../resolver';

const world: LoadedWorld = {
  ...WorldManifest.parse({
    id: 'harbor',
    name: 'Harbor',
    characters: [
      { id: 'mira', name: 'Mira Vell', aliases: ['The Lamplighter'], description: 'Keeps the lights.' },
      { id: 'oren', name: 'Oren', description: 'A sailor.' },
    ],
  }),
  lore: '',
  sharedLore: '',
};

const published = { characters: [{ id: 'mira', name: 'Mira Vell', description: 'Keeps the lights, 🧑🏽‍🚀 灯台 ‏עברית‎.', fields: { might: 4 } }] };

describe('publishedCharacters: made once per world and provider results', () => {
  const registry = new ExtensionRegistry();
  registry.apiFor('keeper', pluginSdk).provideExtension('session.world-context@1', 'characters', { handler: () => ({}) });

  it('the same result object gives the same deep-frozen characters; an equal new one the same values', async () => {
    const result = structuredClone(published);
    const first = await publishedCharacters(registry, async () => result, world);
    expect(first).toEqual(withPublishedCharacters(world.characters, published.characters));
    expect(Object.isFrozen(first) && Object.isFrozen(first![0]) && Object.isFrozen(first![0].fields)).toBe(true);
    expect(await publishedCharacters(registry, async () => result, world)).toBe(first);
    const again = await publishedCharacters(registry, async () => structuredClone(published), world);
    expect(again).toEqual(first);
    expect(again).not.toBe(first);
    // the result given is only read
    expect(result).toEqual(published);
  });

  it('another world, or no characters published, is not answered from another call', async () => {
    const result = structuredClone(published);
    const other = { ...world, characters: [world.characters[1]] };
    expect(await publishedCharacters(registry, async () => result, other)).toEqual(withPublishedCharacters(other.characters, published.characters));
    expect(await publishedCharacters(registry, async () => ({}), world)).toBeNull();
  });
});

describe("ctx.world of an execution's handlers: the published characters, shared", () => {
  it('every handler the resolver runs sees one frozen world with the published characters; the provider runs once', async () => {
    const registry = new ExtensionRegistry();
    let providerRuns = 0;
    const keeper: PluginApi = registry.apiFor('keeper', pluginSdk);
    keeper.provideExtension('session.world-context@1', 'characters', {
      handler: () => {
        providerRuns++;
        return structuredClone(published);
      },
    });
    const seen: LoadedWorld[] = [];
    for (const id of ['a', 'b']) {
      registry.apiFor(`seg-${id}`, pluginSdk).provideExtension('prompt.segment@1', id, {
        handler: (_input, ctx) => {
          seen.push(ctx.world!);
          return [];
        },
      });
    }
    const scope: ExecutionScope = { tenantId: 't', sessionId: 's', turnNumber: 1, locale: 'en', world };
    const resolver = new LiveResolver(new Map(), executionInvoker(scope, { timeoutMs: 5_000, pluginData: emptyPluginData, registry }));
    for (const provider of registry.providers('prompt.segment@1')) await resolver.resolve(provider, { playerInput: { text: 'hello' } });
    expect(providerRuns).toBe(1);
    expect(seen).toHaveLength(2);
    expect(seen[1]).toBe(seen[0]);
    expect(seen[0].characters).toEqual(withPublishedCharacters(world.characters, published.characters));
    expect(Object.isFrozen(seen[0]) && Object.isFrozen(seen[0].characters[0])).toBe(true);
    expect(() => Object.assign(seen[0].characters[0], { name: 'x' })).toThrow(TypeError);
    // the world file's own characters are untouched
    expect(world.characters.map((c) => c.name)).toEqual(['Mira Vell', 'Oren']);
  });
});
