import type { INestApplication } from '@nestjs/common';
import { type NextFunction, type Request, type Response, Router } from 'express';
import type { Engine } from '../../../libs/engine';
import { AdminUsageQuery } from '../bodies';
import { requireAdminKey } from './admin-key';

/** Where the operator's usage report is mounted (with `COVEL_ADMIN_API_KEY` set). */
export const ADMIN_USAGE_PATH = '/admin/usage';

/**
 * The operator's usage report, behind the admin key: `GET /admin/usage?from&to&groupBy=&tenantId=`,
 * every tenant's usage (or one tenant's with `tenantId`), grouped by `day`, `session`, `model`,
 * `runtime` or `tenant`; the same answer as `GET /v1/usage`. A bad parameter is a 400 `INVALID_INPUT`
 * whose `issues` name it. Not mounted without `COVEL_ADMIN_API_KEY` (a 404 like any unknown path).
 */
export function mountUsageRoutes(app: INestApplication, engine: Engine): void {
  const { adminApiKey } = engine.config;
  if (!adminApiKey) return;
  const router = Router();
  router.get('/', (req: Request, res: Response, next: NextFunction) => {
    const query = AdminUsageQuery.safeParse(req.query);
    if (!query.success) {
      const issues = query.error.issues.map((i) => ({ path: i.path.join('.') || '(query)', message: i.message }));
      res.status(400).json({
        statusCode: 400,
        error: 'Bad Request',
        code: 'INVALID_INPUT',
        message: issues.map((i) => `${i.path}: ${i.message}`).join('; '),
        issues,
      });
      return;
    }
    const { from, to, groupBy, tenantId } = query.data;
    engine.usage.report({ tenantId: tenantId ?? null, from, to, groupBy }).then((report) => res.status(200).json(report), next);
  });
  app.use(ADMIN_USAGE_PATH, requireAdminKey(adminApiKey), router);
}
