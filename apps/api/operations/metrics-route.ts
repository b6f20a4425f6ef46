import type { INestApplication } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import type { Engine } from '../../../libs/engine';
import { REPLAYED_HEADER } from '../idempotency-key';

/**
 * `GET /metrics` (Prometheus exposition of this engine's registry: in `npm start` the worker's
 * families too, one process) and the idempotent-replay counter, which reads each answer's
 * `Idempotent-Replayed` header once it is sent (label: the route's pattern, never its ids).
 */
export function mountMetrics(app: INestApplication, engine: Engine): void {
  app.use((req: Request, res: Response, next: NextFunction) => {
    res.once('finish', () => {
      if (res.getHeader(REPLAYED_HEADER) !== 'true') return;
      const route = (req.route as { path?: string } | undefined)?.path;
      engine.metrics.idempotentReplay(`${req.method} ${typeof route === 'string' ? route : '(unknown)'}`);
    });
    next();
  });
  app.use('/metrics', (req: Request, res: Response, next: NextFunction) => {
    if (req.method !== 'GET' || (req.path !== '/' && req.path !== '')) return next();
    engine.metrics.exposition().then(({ contentType, body }) => res.status(200).type(contentType).send(body), next);
  });
}
