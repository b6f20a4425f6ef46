import { type LoadedWorld, withPublishedCharacters, type WorldContextResult } from '../../plugins-sdk';
import { publishedCharacters } from './published-characters';
import type { RequestPlugins } from './request-extensions';
import { resolveShared } from './resolver';

/**
 * The characters a step's request showed (its recorded `session.world-context@1` results, read
 * shared: `publishedCharacters`), for what a tool gives plugin code or the model: a plugin tool's
 * `ctx.world`, get-character's sheets. null: the world's own (no plugins, no world, none published).
 */
export function requestCharacters(plugins: RequestPlugins | undefined, world: LoadedWorld | null): Promise<LoadedWorld['characters'] | null> {
  if (!plugins) return Promise.resolve(null);
  return publishedCharacters(plugins.registry, (provider, input) => resolveShared(plugins.resolver, provider, input), world);
}

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
    // read-only: merged into new objects below (the characters copied by withPublishedCharacters)
    const result = (await resolveShared(plugins.resolver, provider, {})) as WorldContextResult;
    if (result.schema) schema = mergeSchema(schema, result.schema);
    if (result.entries) entries = [...entries, ...result.entries];
    if (result.dimensions) dimensions = { ...dimensions, ...result.dimensions };
    if (result.characters?.length) characters = withPublishedCharacters(characters, result.characters);
  }
  return { ...world, schema, entries, dimensions, characters };
}

type Schema = LoadedWorld['schema'];

function mergeSchema(base: Schema, added: Schema): Schema {
  const own = (s: Schema) => (s.properties !== null && typeof s.properties === 'object' ? (s.properties as Record<string, unknown>) : {});
  return { ...added, ...base, properties: { ...own(added), ...own(base) } };
}
