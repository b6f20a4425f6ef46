import type { INestApplication } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import type { Engine } from '../../../libs/engine';
import { REPLAYED_HEADER } from '../idempotency-key';
import { isAdminKey, presentedKey } from './admin-key';

/**
 * `GET /metrics` (Prometheus exposition of this engine's registry: in `npm start` the worker's
 * families too, one process), for the operator only: `Authorization: Bearer <COVEL_ADMIN_API_KEY>`
 * (Prometheus' `authorization` / `bearer_token_file`), anything else a 401, and without an admin key
 * configured no one (scrape `COVEL_METRICS_PORT`'s listener instead). And the idempotent-replay
 * counter, which reads each answer's `Idempotent-Replayed` header once it is sent (label: the
 * route's pattern, never its ids).
 */
export function mountMetrics(app: INestApplication, engine: Engine): void {
  // one listener for every answer, called on it (`this`): no closure and no `once` wrapper per request
  // (issue 33: CPU per request); `finish` comes once per answer
  function countReplay(this: Response): void {
    if (this.getHeader(REPLAYED_HEADER) !== 'true') return;
    const req = this.req;
    const route = (req.route as { path?: string } | undefined)?.path;
    engine.metrics.idempotentReplay(`${req.method} ${typeof route === 'string' ? route : '(unknown)'}`);
  }
  app.use((_req: Request, res: Response, next: NextFunction) => {
    res.on('finish', countReplay);
    next();
  });
  app.use('/metrics', (req: Request, res: Response, next: NextFunction) => {
    if (req.method !== 'GET' || (req.path !== '/' && req.path !== '')) return next();
    const adminKey = engine.config.adminApiKey;
    if (!adminKey || !isAdminKey(presentedKey(req.headers.authorization), adminKey)) {
      const message = adminKey
        ? 'the admin key (COVEL_ADMIN_API_KEY) is required here'
        : 'no admin key is configured (COVEL_ADMIN_API_KEY): scrape the COVEL_METRICS_PORT listener';
      res
        .status(401)
        .setHeader('WWW-Authenticate', 'Bearer realm="covel-admin"')
        .json({ error: { code: 'ADMIN_KEY_REQUIRED', message } });
      return;
    }
    engine.metrics.exposition().then(({ contentType, body }) => res.status(200).type(contentType).send(body), next);
  });
}
