import { InvalidEventError } from '../errors';
import { eventByEvent, type InlineProjection } from './projection';

/**
 * `worlds`, from a tenant's world stream: `world.created@1` inserts the world at revision 1,
 * `world.revised@1` replaces its document with the next revision (and must be that next one),
 * `world.archived@1` marks it archived. Applied in the append's transaction, so a read after a
 * write sees it; rebuilt from the log alone (`rebuildInline`).
 */
export const worldsProjection: InlineProjection = eventByEvent({
  name: 'worlds',
  handles: ['world.created@1', 'world.revised@1', 'world.archived@1'],
  tables: ['worlds'],
  streamKey: 'world_id',
  async apply(trx, event) {
    if (event.type === 'world.created@1') {
      await trx
        .insertInto('worlds')
        .values({
          world_id: event.streamId,
          tenant_id: event.tenantId,
          name: nameOf(event.data.document),
          revision: 1,
          archived: false,
          document: JSON.stringify(event.data.document),
          provenance: JSON.stringify(event.data.provenance),
          created_position: String(event.globalPosition),
          created_at: event.recordedAt,
          updated_at: event.recordedAt,
        })
        .execute();
    } else if (event.type === 'world.revised@1') {
      const updated = await trx
        .updateTable('worlds')
        .set({ name: nameOf(event.data.document), revision: event.data.revision, document: JSON.stringify(event.data.document), updated_at: event.recordedAt })
        .where('world_id', '=', event.streamId)
        .where('revision', '=', event.data.revision - 1)
        .executeTakeFirst();
      if (updated.numUpdatedRows !== 1n)
        throw new InvalidEventError(event.type, [{ path: 'revision', message: `world ${event.streamId} is not at revision ${event.data.revision - 1}` }]);
    } else if (event.type === 'world.archived@1') {
      await trx.updateTable('worlds').set({ archived: true, updated_at: event.recordedAt }).where('world_id', '=', event.streamId).execute();
    }
  },
});

function nameOf(document: Record<string, unknown>): string {
  return typeof document.name === 'string' ? document.name : '';
}
