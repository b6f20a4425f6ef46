import type { INestApplication } from '@nestjs/common';
import type { Engine } from '../../../libs/engine';
import { mountMetrics } from './metrics-route';
import { mountQueueDashboard } from './queue-dashboard';

export { QUEUE_DASHBOARD_PATH } from './queue-dashboard';
export { isAdminKey, presentedKey, requireAdminKey } from './admin-key';

/** The operator's routes: `GET /metrics` and, when configured, the queue dashboard (Express middleware, outside the OpenAPI routes). */
export function mountOperations(app: INestApplication, engine: Engine): void {
  mountMetrics(app, engine);
  mountQueueDashboard(app, engine);
}
