import type { NextFunction, Request, Response } from 'express';
import { type Engine, type RateDecision, RateLimitedError } from '../../../libs/engine';
import type { TenantRequest } from '../auth.guard';

/**
 * Per-tenant request rate on `/v1`, mounted right after authentication (before a body byte is read):
 * one token of the tenant's bucket per request (an event stream or a long-poll counts once, when it
 * is asked). Every answer carries the fields of draft-ietf-httpapi-ratelimit-headers-08 and later
 * (`RateLimit-Policy: "default";q=<capacity>;w=<seconds to fill an empty bucket>`,
 * `RateLimit: "default";r=<remaining>;t=<seconds until full>`) and, for clients of the drafts up to
 * -06, `RateLimit-Limit`, `RateLimit-Remaining` and `RateLimit-Reset` with the same numbers; over the
 * limit, 429 `RATE_LIMITED` with `Retry-After` (error.filter.ts). No rate in force for the tenant: no headers.
 */
/** The one quota policy a tenant has (its request bucket), named in both fields. */
const POLICY = 'default';

export function rateLimitTenant(engine: Engine) {
  const answer = (res: Response, next: NextFunction, decision: RateDecision | null): void => {
    if (decision) {
      res.setHeader('RateLimit-Policy', `"${POLICY}";q=${decision.limit};w=${decision.windowSeconds}`);
      res.setHeader('RateLimit', `"${POLICY}";r=${decision.remaining};t=${decision.resetSeconds}`);
      res.setHeader('RateLimit-Limit', String(decision.limit));
      res.setHeader('RateLimit-Remaining', String(decision.remaining));
      res.setHeader('RateLimit-Reset', String(decision.resetSeconds));
      if (!decision.allowed) throw new RateLimitedError(decision.retryAfterSeconds);
    }
    next();
  };
  // decided at once when it can be (limits in memory, a token held), without a promise (issue 33: CPU per request)
  return (req: Request, res: Response, next: NextFunction): void | Promise<void> => {
    const tenantId = (req as TenantRequest).tenant.id;
    const atOnce = engine.limits.takeRequestAtOnce(tenantId);
    if (atOnce !== undefined) return answer(res, next, atOnce);
    return engine.limits.takeRequest(tenantId).then((decision) => answer(res, next, decision));
  };
}
