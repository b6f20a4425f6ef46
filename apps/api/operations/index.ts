import type { INestApplication } from '@nestjs/common';
import type { Engine } from '../../../libs/engine';
import { mountMetrics } from './metrics-route';
import { mountQuarantineRoutes } from './quarantine-routes';
import { mountQueueDashboard } from './queue-dashboard';
import { mountTenantLimitsRoutes } from './tenant-limits-routes';
import { mountUsageRoutes } from './usage-routes';

export { QUEUE_DASHBOARD_PATH } from './queue-dashboard';
export { QUARANTINE_PATH } from './quarantine-routes';
export { ADMIN_TENANTS_PATH, OPERATOR } from './tenant-limits-routes';
export { ADMIN_USAGE_PATH } from './usage-routes';
export { isAdminKey, presentedKey, requireAdminKey } from './admin-key';

/**
 * The operator's routes: `GET /metrics`, and with the admin key the quarantined events
 * (`/admin/quarantine`), tenants' limits (`/admin/tenants/:id/limits`), every tenant's usage (`/admin/usage`) and, when configured, the queue dashboard (Express middleware, outside the OpenAPI routes).
 */
export function mountOperations(app: INestApplication, engine: Engine): void {
  mountMetrics(app, engine);
  mountQuarantineRoutes(app, engine);
  mountTenantLimitsRoutes(app, engine);
  mountUsageRoutes(app, engine);
  mountQueueDashboard(app, engine);
}
