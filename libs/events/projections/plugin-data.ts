import { sql, type Transaction } from 'kysely';
import type { StoredEvent } from '../event-types';
import type { Database } from '../schema';
import type { InlineProjection } from './projection';
import { followingStory } from './story-fold';

/**
 * `plugin_data`, from `plugin-data.written@1` and `plugin-data.deleted@1`: one row per
 * (session, plugin, namespace, key). A write creates the row (its log position is the row's
 * creation order and recency) or replaces its value (recency moves, creation order stays); a
 * delete removes it, so a key written again after a delete is a new row, created anew.
 * `plugin_data_namespaces` counts each namespace's rows (the selfData total, read by one key).
 */
export const pluginDataProjection: InlineProjection = followingStory({
  name: 'plugin_data',
  handles: ['plugin-data.written@1', 'plugin-data.deleted@1'],
  tables: ['plugin_data', 'plugin_data_namespaces'],
  async apply(trx, event) {
    if (event.type === 'plugin-data.written@1') {
      const { pluginId, namespace, key, value } = event.data;
      const row = await trx
        .insertInto('plugin_data')
        .values({
          tenant_id: event.tenantId,
          session_id: event.streamId,
          plugin_id: pluginId,
          namespace,
          key,
          value: JSON.stringify(value),
          created_position: event.globalPosition,
          updated_position: event.globalPosition,
        })
        .onConflict((oc) =>
          oc.columns(['session_id', 'plugin_id', 'namespace', 'key']).doUpdateSet((eb) => ({
            value: eb.ref('excluded.value'),
            updated_position: eb.ref('excluded.updated_position'),
          })),
        )
        .returning('created_position')
        .executeTakeFirstOrThrow();
      // created by this event (a rewrite keeps the position of the write that created the row)
      if (Number(row.created_position) === event.globalPosition) await countRows(trx, event, pluginId, namespace, +1);
    } else if (event.type === 'plugin-data.deleted@1') {
      const { pluginId, namespace, key } = event.data;
      const removed = await trx
        .deleteFrom('plugin_data')
        .where('session_id', '=', event.streamId)
        .where('plugin_id', '=', pluginId)
        .where('namespace', '=', namespace)
        .where('key', '=', key)
        .returning('key')
        .executeTakeFirst();
      if (removed) await countRows(trx, event, pluginId, namespace, -1);
    }
  },
});

async function countRows(trx: Transaction<Database>, event: StoredEvent, pluginId: string, namespace: string, change: 1 | -1): Promise<void> {
  await trx
    .insertInto('plugin_data_namespaces')
    .values({ tenant_id: event.tenantId, session_id: event.streamId, plugin_id: pluginId, namespace, row_count: change })
    .onConflict((oc) =>
      oc.columns(['session_id', 'plugin_id', 'namespace']).doUpdateSet({ row_count: sql<number>`plugin_data_namespaces.row_count + ${change}` }),
    )
    .execute();
}
