import { type LoadedWorld, withPublishedCharacters, type WorldContextResult } from '../../plugins-sdk';
import { deepFreeze } from '../../memo';
import type { ExtensionRegistry, RegisteredExtension } from './registry';

/** Resolves one `session.world-context@1` provider for `{}` (through a resolver: recorded and reused). */
export type WorldContextRun = (provider: RegisteredExtension, input: Record<string, never>) => Promise<unknown>;

/**
 * The characters made from the same world and the same provider results (by identity: a resolver's
 * shared results, `resolveShared`, are one object per recorded text), deep-frozen, made once: every
 * handler an execution runs (~13 an Emberback turn) asked for them again, each parsing the
 * providers' results, merging the characters and copying them for its `ctx.world` (issue 33). At
 * most `KEPT_PER_WORLD` per world, the oldest forgotten first.
 */
const KEPT_PER_WORLD = 8;
const madeFrom = new WeakMap<LoadedWorld, { results: readonly unknown[]; characters: LoadedWorld['characters'] | null }[]>();
const frozenCharacters = new WeakSet<object>();

/** Whether these characters are `publishedCharacters`' own: deep-frozen, never changed, safe to share. */
export const isSharedCharacters = (characters: object): boolean => frozenCharacters.has(characters);

/**
 * The world a handler, hook or plugin tool sees (`ctx.world`): the world file's, its characters as
 * the `session.world-context@1` providers publish them — the same characters the request's body and
 * the narrator's sheets show, so a roster a segment lists and the tool that checks an id agree. Only
 * the characters: `schema`, `entries` and `dimensions` stay the world's declarations (a tracker reads
 * its update rules there). A provider itself is given the world file's view (no cycle). `null`: the
 * characters are the world's (no world, no provider, or none publishes characters). The results
 * `run` gives are only read.
 */
export async function publishedCharacters(
  registry: Pick<ExtensionRegistry, 'providers'>,
  run: WorldContextRun,
  world: LoadedWorld | null,
): Promise<LoadedWorld['characters'] | null> {
  const providers = registry.providers('session.world-context@1');
  if (!world || providers.length === 0) return null;
  const results: unknown[] = [];
  for (const provider of providers) results.push(await run(provider, {}));
  const kept = madeFrom.get(world) ?? [];
  const known = kept.find((k) => k.results.length === results.length && k.results.every((r, i) => r === results[i]));
  if (known) return known.characters;
  let characters: LoadedWorld['characters'] | null = null;
  for (const result of results as WorldContextResult[])
    if (result.characters?.length) characters = withPublishedCharacters(characters ?? world.characters, result.characters);
  if (characters) {
    characters = deepFreeze(structuredClone(characters));
    frozenCharacters.add(characters);
  }
  kept.push({ results, characters });
  if (kept.length > KEPT_PER_WORLD) kept.shift();
  madeFrom.set(world, kept);
  return characters;
}
