import type { NextFunction, Request, Response } from 'express';
import type { Engine } from '../../../libs/engine';
import type { TenantRequest } from '../auth.guard';
import { idempotencyKeyOf } from '../idempotency-key';

/**
 * The `/v1` routes (paths relative to the mount) whose request starts model calls: a new input, a
 * regeneration, an activation, a world generation. Case-blind, as the router is (`/INPUTS` reaches `/inputs`).
 */
const STARTS_MODEL_CALLS: readonly { method: string; path: RegExp }[] = [
  { method: 'POST', path: /^\/sessions\/[^/]+\/inputs\/?$/i },
  { method: 'POST', path: /^\/sessions\/[^/]+\/turns\/[^/]+\/retry\/?$/i },
  { method: 'POST', path: /^\/sessions\/[^/]+\/activations\/?$/i },
  { method: 'POST', path: /^\/worlds\/generate\/?$/i },
];

/** An edit of a message with `regenerate: true` re-runs the turn. */
const isRegeneratingEdit = (req: Request) =>
  req.method === 'PATCH' &&
  /^\/sessions\/[^/]+\/messages\/[^/]+\/?$/i.test(req.path) &&
  typeof req.body === 'object' &&
  req.body !== null &&
  (req.body as { regenerate?: unknown }).regenerate === true;

/**
 * The spend budget, checked before a request that would start model calls reaches its route, so
 * nothing is appended when it is used up: 402 `BUDGET_EXHAUSTED` with the period and its reset time.
 * Mounted on `/v1` after the body is parsed (an edit regenerates only with `regenerate: true`). A new
 * session is not checked: its opening is rendered from the world, no model runs. Executions already
 * accepted run to their end (a resume of a waiting one too): no turn is cut in half. The retry of a
 * request accepted before (an `Idempotency-Key` the tenant already appended under, its answer lost)
 * is not checked: the route answers it again (or 422 for another request) and starts nothing new.
 */
export function budgetGate(engine: Engine) {
  const check = async (next: NextFunction, tenantId: string, idempotencyKey: string | undefined): Promise<void> => {
    if (idempotencyKey === undefined || !(await engine.store.findByIdempotencyKey(tenantId, idempotencyKey))) await engine.limits.checkBudget(tenantId);
    next();
  };
  return (req: Request, _res: Response, next: NextFunction): void | Promise<void> => {
    const startsModelCalls = STARTS_MODEL_CALLS.some((r) => r.method === req.method && r.path.test(req.path)) || isRegeneratingEdit(req);
    if (!startsModelCalls) return next();
    const tenantId = (req as TenantRequest).tenant.id;
    const idempotencyKey = idempotencyKeyOf(req); // malformed: the 400 naming the header
    // no budget in force (the tenant's limits in memory): nothing to read, no promise (issue 33: CPU per request)
    if (engine.limits.noBudgetAtOnce(tenantId)) return next();
    return check(next, tenantId, idempotencyKey);
  };
}
