import type { INestApplication } from '@nestjs/common';
import { type NextFunction, type Request, type Response, Router } from 'express';
import { z } from 'zod';
import type { Engine } from '../../../libs/engine';
import { QUARANTINE_ID_PATTERN } from '../../../libs/events';
import { requireAdminKey } from './admin-key';

/** Where the quarantine routes are mounted (with `COVEL_ADMIN_API_KEY` set). */
export const QUARANTINE_PATH = '/admin/quarantine';

/** Who an acknowledgement through the API is recorded as (there is one admin key). */
export const API_ACKNOWLEDGER = 'admin-api';

const ListQuery = z.object({ state: z.enum(['open', 'unresolved', 'all']).default('unresolved') });

const errorBody = (statusCode: number, error: string, code: string, message: string, issues?: { path: string; message: string }[]) => ({
  statusCode,
  error,
  code,
  message,
  ...(issues ? { issues } : {}),
});

/**
 * The operator's view of the events async projections skipped, behind the admin key (every tenant's:
 * tenant, stream, error text). `GET /admin/quarantine[?state=open|unresolved|all]` lists them (default
 * unresolved, newest first); `POST /admin/quarantine/:id/ack` acknowledges one (400 naming `id` when it is not a record id), after which `/health`
 * no longer counts it (idempotent). Not mounted without `COVEL_ADMIN_API_KEY` (a 404 like any unknown
 * path; `npm run quarantine` does the same from a shell).
 */
export function mountQuarantineRoutes(app: INestApplication, engine: Engine): void {
  const { adminApiKey } = engine.config;
  if (!adminApiKey) return;
  const records = engine.projector.quarantine;
  const router = Router();
  router.get('/', (req: Request, res: Response, next: NextFunction) => {
    const query = ListQuery.safeParse(req.query);
    if (!query.success) {
      res
        .status(400)
        .json(
          errorBody(400, 'Bad Request', 'INVALID_QUERY', 'state: one of open, unresolved, all', [{ path: 'state', message: 'one of open, unresolved, all' }]),
        );
      return;
    }
    records.list({ state: query.data.state }).then((quarantined) => res.status(200).json({ quarantined }), next);
  });
  router.post('/:id/ack', (req: Request, res: Response, next: NextFunction) => {
    const id = String(req.params.id);
    // checked first: the 404 below quotes only an id of at most 18 digits (nothing to cut)
    if (!QUARANTINE_ID_PATTERN.test(id)) {
      const message = 'a record id: a positive integer (at most 18 digits)';
      res.status(400).json(errorBody(400, 'Bad Request', 'INVALID_QUARANTINE_ID', `id: ${message}`, [{ path: 'id', message }]));
      return;
    }
    records.acknowledge(id, API_ACKNOWLEDGER).then((acked) => {
      if (!acked) res.status(404).json(errorBody(404, 'Not Found', 'QUARANTINE_NOT_FOUND', `no quarantined event ${id}`));
      else res.status(200).json(acked);
    }, next);
  });
  app.use(QUARANTINE_PATH, requireAdminKey(adminApiKey), router);
}
