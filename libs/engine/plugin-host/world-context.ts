import { type LoadedWorld, withPublishedCharacters, type WorldContextResult } from '../../plugins-sdk';
import type { RequestPlugins } from './request-extensions';
import type { ExtensionRegistry, RegisteredExtension } from './registry';

/** Resolves one `session.world-context@1` provider for `{}` (through a resolver: recorded and reused). */
export type WorldContextRun = (provider: RegisteredExtension, input: Record<string, never>) => Promise<unknown>;

/**
 * Spec §3: "Supplementary world structure is returned by session.world-context@1: schema / entries,
 * and the current values in dimensions." The session's world as a runtime's body sees it
 * (`{{ world.schema | entries | dimensions }}`, `{{ player.character }}`, `{{ characters.npcs }}`):
 * each provider, in plugin id order, adds the schema's properties (a property the world declares
 * keeps the world's), appends entries, sets the current value of dimensions (a provider's dimension
 * replaces the world's declaration of that id), and applies the characters it publishes
 * (`withPublishedCharacters`: spec §4, the characters "change as the story goes on"). The input is
 * the same for every runtime of an execution, so the result is reused (and recorded once); a world
 * with no provider is returned as it is.
 */
export async function extendedWorld(plugins: RequestPlugins, world: LoadedWorld | null): Promise<LoadedWorld | null> {
  const providers = plugins.registry.providers('session.world-context@1');
  if (!world || providers.length === 0) return world;
  let schema = world.schema;
  let entries = world.entries;
  let dimensions = world.dimensions;
  let characters = world.characters;
  for (const provider of providers) {
    const result = (await plugins.resolver.resolve(provider, {})) as WorldContextResult;
    if (result.schema) schema = mergeSchema(schema, result.schema);
    if (result.entries) entries = [...entries, ...result.entries];
    if (result.dimensions) dimensions = { ...dimensions, ...result.dimensions };
    if (result.characters?.length) characters = withPublishedCharacters(characters, result.characters);
  }
  return { ...world, schema, entries, dimensions, characters };
}

/**
 * The world a handler, hook or plugin tool sees (`ctx.world`): the world file's, its characters as
 * the `session.world-context@1` providers publish them — the same characters the request's body and
 * the narrator's sheets show, so a roster a segment lists and the tool that checks an id agree. Only
 * the characters: `schema`, `entries` and `dimensions` stay the world's declarations (a tracker reads
 * its update rules there). A provider itself is given the world file's view (no cycle). `null`: the
 * characters are the world's (no world, no provider, or none publishes characters).
 */
export async function publishedCharacters(
  registry: Pick<ExtensionRegistry, 'providers'>,
  run: WorldContextRun,
  world: LoadedWorld | null,
): Promise<LoadedWorld['characters'] | null> {
  const providers = registry.providers('session.world-context@1');
  if (!world || providers.length === 0) return null;
  let characters: LoadedWorld['characters'] | null = null;
  for (const provider of providers) {
    const result = (await run(provider, {})) as WorldContextResult;
    if (result.characters?.length) characters = withPublishedCharacters(characters ?? world.characters, result.characters);
  }
  return characters;
}

type Schema = LoadedWorld['schema'];

function mergeSchema(base: Schema, added: Schema): Schema {
  const own = (s: Schema) => (s.properties !== null && typeof s.properties === 'object' ? (s.properties as Record<string, unknown>) : {});
  return { ...added, ...base, properties: { ...own(added), ...own(base) } };
}
