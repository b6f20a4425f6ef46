import type { Transaction } from 'kysely';
import { EngineError } from '../../../errors';
import { InlineProjectionFailedError } from '../../errors';
import type { StoredEvent } from '../../event-types';
import type { Database } from '../../schema';
import { isDatabaseUnavailable } from '../../unavailable';
import type { InlineProjection } from '../projection';

/**
 * Applies `events` (in stream order) to the inline projections that handle them, in the caller's
 * transaction. Event by event, each projection in list order: an append holds a few events, and a
 * failure then names its event. A projection that throws fails with `InlineProjectionFailedError`
 * (the caller's transaction is then rolled back); a lost connection is passed on as it is, so it
 * still reads as the database being unavailable, and so is a conflict (an event decided on state
 * that is no longer so, e.g. `CompactionPrefixMismatchError`), which its caller handles.
 */
export async function applyInline(trx: Transaction<Database>, projections: readonly InlineProjection[], events: readonly StoredEvent[]): Promise<void> {
  for (const [index, event] of events.entries()) {
    for (const projection of projections) {
      if (!projection.handles.includes(event.type)) continue;
      if (projection.coveredBy?.(event, { earlier: events.slice(0, index), later: events.slice(index + 1) })) continue;
      try {
        await projection.applyBatch(trx, [event]);
      } catch (error) {
        if (isDatabaseUnavailable(error) || (error instanceof EngineError && error.category === 'conflict')) throw error;
        throw new InlineProjectionFailedError(projection.name, event.type, event.streamId, event.tenantId, error);
      }
    }
  }
}
