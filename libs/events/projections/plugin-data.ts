import { type RawBuilder, sql, type Transaction } from 'kysely';
import type { StoredEvent } from '../event-types';
import type { Database } from '../schema';
import type { InlineProjection, PendingEvent, SqlWrite, SqlWriteContext } from './projection';
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
  sqlFor: pluginDataSql,
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

/**
 * `event`'s write in the append's statement (`Projection.sqlFor`, issue 33: an append with a
 * plugin-data event was a transaction of four to six statements): the statements of `apply` above as
 * two CTEs, the row's write (its position read from the event's inserted row, `ctx.row`) and the
 * namespace's count, changed only when the row was created (a rewrite keeps its creation position)
 * or removed. Names the row and its namespace's count: two writes of one namespace in one append
 * take the transaction (`applyBatch`), as a row must not be written twice in one statement.
 */
function pluginDataSql(event: PendingEvent, ctx: SqlWriteContext): SqlWrite | null {
  if (event.type !== 'plugin-data.written@1' && event.type !== 'plugin-data.deleted@1') return null;
  const { pluginId, namespace, key } = event.data;
  const rows = [`plugin_data:${JSON.stringify([pluginId, namespace, key])}`, `plugin_data_namespaces:${JSON.stringify([pluginId, namespace])}`];
  const scope = sql`${event.tenantId}::text, ${event.streamId}::text, ${pluginId}::text, ${namespace}::text`;
  const count = (from: RawBuilder<unknown>, change: 1 | -1) =>
    sql`insert into plugin_data_namespaces (tenant_id, session_id, plugin_id, namespace, row_count)
      select ${scope}, ${change}::int from ${from}
      on conflict (session_id, plugin_id, namespace) do update set row_count = plugin_data_namespaces.row_count + ${change}::int`;
  if (event.type === 'plugin-data.written@1') {
    const write = sql`insert into plugin_data (tenant_id, session_id, plugin_id, namespace, key, value, created_position, updated_position)
      select ${scope}, ${key}::text, ${JSON.stringify(event.data.value)}::jsonb, e.global_position, e.global_position from ${ctx.row} e
      on conflict (session_id, plugin_id, namespace, key) do update set value = excluded.value, updated_position = excluded.updated_position
      returning created_position, updated_position`;
    // created by this event: its creation position is the event's (a rewrite's stays the first write's)
    return {
      ctes: [
        { name: 'w', body: write },
        { name: 'n', body: count(sql`${ctx.ref('w')} w where w.created_position = w.updated_position`, 1) },
      ],
      rows,
    };
  }
  const remove = sql`delete from plugin_data
    where session_id = ${event.streamId}::text and plugin_id = ${pluginId}::text and namespace = ${namespace}::text and key = ${key}::text
      and exists (select from ${ctx.row} e)
    returning key`;
  return {
    ctes: [
      { name: 'd', body: remove },
      { name: 'n', body: count(ctx.ref('d'), -1) },
    ],
    rows,
  };
}

async function countRows(trx: Transaction<Database>, event: StoredEvent, pluginId: string, namespace: string, change: 1 | -1): Promise<void> {
  await trx
    .insertInto('plugin_data_namespaces')
    .values({ tenant_id: event.tenantId, session_id: event.streamId, plugin_id: pluginId, namespace, row_count: change })
    .onConflict((oc) =>
      oc.columns(['session_id', 'plugin_id', 'namespace']).doUpdateSet({ row_count: sql<number>`plugin_data_namespaces.row_count + ${change}` }),
    )
    .execute();
}
