import { type LoadedWorld, withPublishedCharacters, type WorldContextResult } from '../../plugins-sdk';
import type { ExtensionRegistry, RegisteredExtension } from './registry';

/** Resolves one `session.world-context@1` provider for `{}` (through a resolver: recorded and reused). */
export type WorldContextRun = (provider: RegisteredExtension, input: Record<string, never>) => Promise<unknown>;

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
