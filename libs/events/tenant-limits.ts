import type { Kysely } from 'kysely';
import { TenantLimits, tenantStreamId } from './event-types';
import type { Database } from './schema';

/** A tenant's limits as recorded (`tenant_limits`), or none: the deployment's defaults. */
export interface RecordedTenantLimits {
  limits: TenantLimits;
  /** Who changed them last (`operator`). */
  changedBy: string;
  updatedAt: Date;
}

/** A `tenant_limits` row (its columns as read, or all null: none) as recorded limits; null when there is none. */
export function recordedTenantLimits(
  row: { limits: unknown; changed_by: string | null; updated_at: Date | string | null } | null,
): RecordedTenantLimits | null {
  if (!row || row.changed_by === null || row.updated_at === null || row.limits === null) return null;
  const limits = typeof row.limits === 'string' ? (JSON.parse(row.limits) as unknown) : row.limits;
  return { limits: TenantLimits.parse(limits), changedBy: row.changed_by, updatedAt: new Date(row.updated_at) };
}

/** Reads of `tenant_limits` (one row per tenant, by its stream id) and of whether a tenant exists. */
export class TenantLimitsReads {
  constructor(private readonly db: Kysely<Database>) {}

  async current(tenantId: string): Promise<RecordedTenantLimits | null> {
    const row = await this.db
      .selectFrom('tenant_limits')
      .select(['limits', 'changed_by', 'updated_at'])
      .where('stream_id', '=', tenantStreamId(tenantId))
      .executeTakeFirst();
    return recordedTenantLimits(row ?? null);
  }

  async tenantExists(tenantId: string): Promise<boolean> {
    const row = await this.db.selectFrom('tenants').select('id').where('id', '=', tenantId).executeTakeFirst();
    return row !== undefined;
  }
}
