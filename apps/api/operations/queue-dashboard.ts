import type { INestApplication } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import { BullMqTurnQueue, ConfigError, type Engine } from '../../../libs/engine';
import { requireAdminKey } from './admin-key';

/** Where bull-board is mounted when `COVEL_QUEUE_DASHBOARD=on`. */
export const QUEUE_DASHBOARD_PATH = '/admin/queues';

/**
 * The dashboard's Content-Security-Policy: its own scripts, styles (bull-board's page has inline
 * `style` attributes and one inline `<style>`), images and API, nothing from another origin.
 */
export const QUEUE_DASHBOARD_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'self'; form-action 'self'; frame-ancestors 'none'";

/** A `<link>` to another origin (bull-board's page loads its fonts from fonts.googleapis.com). */
const EXTERNAL_LINK = /<link\b[^>]*\bhref\s*=\s*["']?(?:https?:)?\/\/[^>]*>\s*/gi;

/** The page without its links to other origins: the fonts fall back to the browser's own. */
export const withoutExternalLinks = (html: string): string => html.replace(EXTERNAL_LINK, '');

/**
 * In front of bull-board: every answer carries {@link QUEUE_DASHBOARD_CSP}, and the page it renders
 * is sent without links to other origins (an operator's browser contacts no one but the API).
 */
function selfContained(_req: Request, res: Response, next: NextFunction): void {
  res.setHeader('Content-Security-Policy', QUEUE_DASHBOARD_CSP);
  const render = res.render.bind(res);
  res.render = ((view: string, options?: object) =>
    render(view, options ?? {}, (error: Error | null, html?: string) => {
      if (error) return next(error);
      res.send(withoutExternalLinks(html ?? ''));
    })) as Response['render'];
  next();
}

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
  // required here, not at the top: only an API with the dashboard on loads bull-board (every process and
  // test file that loads the API would otherwise pay for it)
  /* eslint-disable @typescript-eslint/no-require-imports */
  const { createBullBoard } = require('@bull-board/api') as typeof import('@bull-board/api');
  const { BullMQAdapter } = require('@bull-board/api/bullMQAdapter') as typeof import('@bull-board/api/bullMQAdapter');
  const { ExpressAdapter } = require('@bull-board/express') as typeof import('@bull-board/express');
  /* eslint-enable @typescript-eslint/no-require-imports */
  const serverAdapter = new ExpressAdapter();
  serverAdapter.setBasePath(QUEUE_DASHBOARD_PATH);
  createBullBoard({ queues: engine.queue.queues().map((q) => new BullMQAdapter(q)), serverAdapter });
  app.use(QUEUE_DASHBOARD_PATH, requireAdminKey(adminApiKey), selfContained, serverAdapter.getRouter());
}
