import type { WorldReads } from '../../events';
import { type LoadedWorld, toLoadedWorld } from '../../plugins-sdk';
import type { WorldCatalog, WorldLoader, WorldRef } from '../catalog/world-catalog';
import { BoundedMemo } from '../../memo';
import { validWorldDocument } from './world-document';

/** Revisions kept loaded per process. */
const LOADED_CACHE_SIZE = 1_000;

/**
 * The worlds sessions run, as the engine runs them (a `WorldLoader`): a built-in file world (no
 * revision), or a revision of a tenant's world, read from the log once per process (a revision
 * never changes) and kept by tenant, world and revision.
 */
export class WorldRevisions implements WorldLoader {
  private readonly loaded = new BoundedMemo<string, LoadedWorld>({ maxEntries: LOADED_CACHE_SIZE });
  constructor(private readonly deps: { reads: WorldReads; files: WorldCatalog }) {}

  /** Null when there is no such world (or revision) for the tenant. */
  async load(ref: WorldRef): Promise<LoadedWorld | null> {
    if (ref.revision === undefined) return this.deps.files.load(ref);
    const key = `${ref.tenantId}/${ref.worldId}@${ref.revision}`;
    const cached = this.loaded.get(key);
    if (cached) return cached;
    const recorded = await this.deps.reads.revision(ref.tenantId, ref.worldId, ref.revision);
    if (!recorded) return null;
    const world = loadedRevision(ref.worldId, recorded.document);
    this.loaded.set(key, world);
    return world;
  }
}

/** A recorded revision's document as the engine runs it (it was validated when appended; defaults are filled again). */
export function loadedRevision(worldId: string, document: Record<string, unknown>): LoadedWorld {
  return toLoadedWorld(worldId, validWorldDocument(document));
}
