import { WorldManifest } from '../../plugins-sdk';
import { InvalidInputError } from '../../errors';

/** The id schema of a WORLD.md (`WorldManifest`'s `id`: lowercase letters, digits and dashes, starting with a letter). */
const WorldId = WorldManifest.shape.id;

/** True for a world id a WORLD.md accepts, which is also a safe folder name. */
export const isWorldId = (id: string): boolean => WorldId.safeParse(id).success;

/** Throws an `INVALID_WORLD_ID` error (category `invalid`) unless `id` is a world id: a caller's bug, the engine's ids always are. */
export function assertWorldId(id: string): void {
  if (!isWorldId(id))
    throw new InvalidInputError([{ path: 'id', message: 'must be lowercase letters, digits and dashes, starting with a letter' }], 'INVALID_WORLD_ID');
}
