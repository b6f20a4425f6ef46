import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { ExpressAdapter } from '@bull-board/express';
import type { INestApplication } from '@nestjs/common';
import { BullMqTurnQueue, ConfigError, type Engine } from '../../../libs/engine';
import { requireAdminKey } from './admin-key';

/** Where bull-board is mounted when `COVEL_QUEUE_DASHBOARD=on`. */
export const QUEUE_DASHBOARD_PATH = '/admin/queues';

/**
 * bull-board over the turn and runtime queues, behind the admin key; off unless configured
 * (the config refuses `on` without COVEL_ADMIN_API_KEY or without REDIS_URL). Not mounted: the path
 * is a 404 like any unknown one.
 */
export function mountQueueDashboard(app: INestApplication, engine: Engine): void {
  const { queueDashboard, adminApiKey } = engine.config;
  if (!queueDashboard) return;
  if (!adminApiKey) throw new ConfigError([{ path: 'COVEL_ADMIN_API_KEY', message: 'the queue dashboard needs it' }]);
  if (!(engine.queue instanceof BullMqTurnQueue))
    throw new ConfigError([{ path: 'COVEL_QUEUE_DASHBOARD', message: 'needs the BullMQ queue (REDIS_URL); the in-process queue has no dashboard' }]);
  const serverAdapter = new ExpressAdapter();
  serverAdapter.setBasePath(QUEUE_DASHBOARD_PATH);
  createBullBoard({ queues: engine.queue.queues().map((q) => new BullMQAdapter(q)), serverAdapter });
  app.use(QUEUE_DASHBOARD_PATH, requireAdminKey(adminApiKey), serverAdapter.getRouter());
}
