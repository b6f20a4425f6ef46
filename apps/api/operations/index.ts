import type { INestApplication } from '@nestjs/common';
import type { Engine } from '../../../libs/engine';
import { mountMetrics } from './metrics-route';
import { mountQuarantineRoutes } from './quarantine-routes';
import { mountQueueDashboard } from './queue-dashboard';
import { mountUsageRoutes } from './usage-routes';

export { QUEUE_DASHBOARD_PATH } from './queue-dashboard';
export { QUARANTINE_PATH } from './quarantine-routes';
export { ADMIN_USAGE_PATH } from './usage-routes';
export { isAdminKey, presentedKey, requireAdminKey } from './admin-key';

/**
 * The operator's routes, each behind the admin key: `GET /metrics`, the quarantined events
 * (`/admin/quarantine`), every tenant's usage (`/admin/usage`)
 * and, when configured, the queue dashboard (Express middleware, outside the OpenAPI routes). The
 * operator's tenants, their keys and limits (`/admin/tenants`) are a controller (admin-tenants.controller.ts).
 */
export function mountOperations(app: INestApplication, engine: Engine): void {
  mountMetrics(app, engine);
  mountQuarantineRoutes(app, engine);
  mountUsageRoutes(app, engine);
  mountQueueDashboard(app, engine);
}
