import type { INestApplication } from '@nestjs/common';
import { json, type NextFunction, type Request, type Response, Router } from 'express';
import type { Engine } from '../../../libs/engine';
import { InvalidInputError } from '../../../libs/errors';
import { TenantLimits } from '../../../libs/events';
import { bodyErrorsAsEngineErrors } from '../request-gate';
import { requireAdminKey } from './admin-key';
import { ADMIN_TENANTS_PATH } from './admin-tenants.controller';

/** Who a change through the admin key is recorded as (`by` of `tenant.limits-changed@1`). */
export const OPERATOR = 'operator';

/** A limits document is a handful of numbers. */
const LIMITS_BODY_BYTES = 16 * 1024;

/**
 * The operator's view and change of a tenant's limits, behind the admin key:
 * `GET /admin/tenants/:id/limits` and `PUT /admin/tenants/:id/limits` (the whole `TenantLimits`
 * object: absent fields are the deployment's defaults; 400 naming the field, 404 `TENANT_NOT_FOUND`).
 * A change is recorded as `tenant.limits-changed@1` (`by: operator`) and is in force on every API
 * process within `LIMITS_CACHE_MS`. Not mounted without `COVEL_ADMIN_API_KEY` (404 like any unknown path).
 */
export function mountTenantLimitsRoutes(app: INestApplication, engine: Engine): void {
  const { adminApiKey } = engine.config;
  if (!adminApiKey) return;
  const router = Router();
  router.get('/:id/limits', (req: Request, res: Response, next: NextFunction) => {
    engine.limits.view(String(req.params.id)).then((view) => res.status(200).json(view), next);
  });
  router.put('/:id/limits', json({ limit: LIMITS_BODY_BYTES, type: () => true }), (req: Request, res: Response, next: NextFunction) => {
    const parsed = TenantLimits.safeParse(req.body ?? {});
    if (!parsed.success) {
      const issues = parsed.error.issues.map((i) => ({
        path: [...i.path, ...('keys' in i && Array.isArray(i.keys) ? [String(i.keys[0])] : [])].join('.') || '(body)',
        message: i.message,
      }));
      next(new InvalidInputError(issues, 'INVALID_LIMITS'));
      return;
    }
    engine.limits.change({ tenantId: String(req.params.id), limits: parsed.data, by: OPERATOR }).then((view) => res.status(200).json(view), next);
  });
  app.use(ADMIN_TENANTS_PATH, requireAdminKey(adminApiKey), router, bodyErrorsAsEngineErrors);
}
