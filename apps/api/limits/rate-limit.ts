import type { NextFunction, Request, Response } from 'express';
import { type Engine, RateLimitedError } from '../../../libs/engine';
import type { TenantRequest } from '../auth.guard';

/**
 * Per-tenant request rate on `/v1`, mounted right after authentication (before a body byte is read):
 * one token of the tenant's bucket per request (an event stream or a long-poll counts once, when it
 * is asked). Every answer carries `RateLimit-Limit` (the bucket's capacity), `RateLimit-Remaining`
 * and `RateLimit-Reset` (seconds until it is full); over the limit, 429 `RATE_LIMITED` with
 * `Retry-After` (error.filter.ts). No rate in force for the tenant: no headers.
 */
export function rateLimitTenant(engine: Engine) {
  return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    const decision = await engine.limits.takeRequest((req as TenantRequest).tenant.id);
    if (decision) {
      res.setHeader('RateLimit-Limit', String(decision.limit));
      res.setHeader('RateLimit-Remaining', String(decision.remaining));
      res.setHeader('RateLimit-Reset', String(decision.resetSeconds));
      if (!decision.allowed) throw new RateLimitedError(decision.retryAfterSeconds);
    }
    next();
  };
}
