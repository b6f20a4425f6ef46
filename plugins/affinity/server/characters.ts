import type { PluginSdk, WorldView } from '../../../libs/plugins-sdk';

/** The ids of the characters whose feelings are tracked: not of type `player`, not played from a seat; by id (code units). */
export function trackedIds(world: WorldView | null, sdk: PluginSdk): string[] {
  if (!world) return [];
  const seated = new Set(world.seats.map((s) => s.characterId).filter((id): id is string => id !== undefined));
  return world.characters
    .filter((c) => c.type !== 'player' && !seated.has(c.id))
    .map((c) => c.id)
    .sort(sdk.byCodeUnits);
}
