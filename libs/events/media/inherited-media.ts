import type { StoredEvent } from '../event-types';
import type { MediaRef, MediaStore, NewMedia, StoredMedia } from './port';

/** Branches deeper than this are not followed (a guard: a branch chain is as long as its player made it). */
const MAX_BRANCH_DEPTH = 64;

/**
 * A MediaStore for sessions that may be branches (issue 30): a branch's history holds its parent's
 * messages up to the branch point, and their media are stored under the session that generated
 * them. A `get` the session itself does not have is read from its parent (`session.branched@1`,
 * the first event of a branch's log), then its parent's parent; same tenant, same media id, the
 * same bytes (callers still check length and sha256). Writes go to the session named.
 */
export class InheritedMedia implements MediaStore {
  constructor(
    private readonly store: MediaStore,
    private readonly firstEvent: (sessionId: string) => Promise<StoredEvent | undefined>,
  ) {}

  put(item: NewMedia): Promise<string> {
    return this.store.put(item);
  }

  async get(ref: MediaRef): Promise<StoredMedia | null> {
    let sessionId = ref.sessionId;
    for (let depth = 0; depth <= MAX_BRANCH_DEPTH; depth++) {
      const item = await this.store.get({ ...ref, sessionId });
      if (item) return item;
      const first = await this.firstEvent(sessionId);
      if (first?.type !== 'session.branched@1' || first.tenantId !== ref.tenantId) return null;
      sessionId = first.data.parentSessionId;
    }
    return null;
  }
}
