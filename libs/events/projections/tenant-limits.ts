import { eventByEvent, type InlineProjection } from './projection';

/**
 * `tenant_limits`, from a tenant's stream (`tenant:<tenantId>`): `tenant.limits-changed@1` replaces
 * the tenant's limits as a whole (the last one wins). Applied in the append's transaction, so the
 * next read sees it; rebuilt from the log alone (`rebuildInline`).
 */
export const tenantLimitsProjection: InlineProjection = eventByEvent({
  name: 'tenant_limits',
  handles: ['tenant.limits-changed@1'],
  tables: ['tenant_limits'],
  streamKey: 'stream_id',
  async apply(trx, event) {
    if (event.type !== 'tenant.limits-changed@1') return;
    const row = {
      limits: JSON.stringify(event.data.limits),
      changed_by: event.data.by,
      version: event.streamVersion,
      updated_at: event.recordedAt,
    };
    await trx
      .insertInto('tenant_limits')
      .values({ stream_id: event.streamId, tenant_id: event.tenantId, ...row })
      .onConflict((c) => c.column('stream_id').doUpdateSet(row))
      .execute();
  },
});
