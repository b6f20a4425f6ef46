/**
 * The stream of a tenant's own settings and admin actions (its limits, its keys): `tenant:<tenantId>`.
 * Never a session's, world's or job's stream (those are UUIDs).
 */
export function tenantStreamId(tenantId: string): string {
  return `tenant:${tenantId}`;
}
