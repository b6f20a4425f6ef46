import type { WorldView } from '../../../libs/plugins-sdk';

export interface TrackedCharacter {
  id: string;
  name: string;
  aliases: readonly string[];
}

/** The characters whose feelings are tracked: not of type `player`, not played from a seat; sorted by id (code units, locale-independent). */
export function trackedCharacters(world: WorldView | null): TrackedCharacter[] {
  if (!world) return [];
  const seated = new Set(world.seats.map((s) => s.characterId).filter((id): id is string => id !== undefined));
  return world.characters
    .filter((c) => c.type !== 'player' && !seated.has(c.id))
    .map((c) => ({ id: c.id, name: c.name, aliases: c.aliases }))
    .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}
