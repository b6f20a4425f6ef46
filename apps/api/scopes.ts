import type { NextFunction, Request, Response } from 'express';
import type { ApiKeyScope } from '../../libs/events';
import type { TenantRequest } from './auth.guard';
import { InsufficientScopeError } from './request-errors';

/** A route that needs another scope than the default rule gives it: `path` is relative to `/v1`, matched against the lower-cased path. */
export interface ScopeOverride {
  /** Any method when absent. */
  methods?: readonly string[];
  path: RegExp;
  scope: ApiKeyScope;
}

/**
 * Where the default rule is not right: the tenant's keys (and, as they come, its other settings)
 * need `admin` whatever the method. A new route that is a read (GET) or a write of sessions and
 * worlds needs no entry.
 */
export const SCOPE_OVERRIDES: readonly ScopeOverride[] = [{ path: /^\/keys(\/|$)/, scope: 'admin' }];

/** The scope a `/v1` request needs: an override's, else `read` for GET and HEAD, `play` for any other method. */
export function requiredScope(method: string, path: string, overrides: readonly ScopeOverride[] = SCOPE_OVERRIDES): ApiKeyScope {
  const upper = method.toUpperCase();
  // the router matches paths whatever their letter case (`/v1/KEYS` reaches `/v1/keys`): so does this
  const lower = path.toLowerCase();
  const override = overrides.find((o) => o.path.test(lower) && (!o.methods || o.methods.includes(upper)));
  if (override) return override.scope;
  return upper === 'GET' || upper === 'HEAD' ? 'read' : 'play';
}

/**
 * After `authenticateTenant` on `/v1`, before any body byte is read: a key without the scope the
 * request needs is a 403 `INSUFFICIENT_SCOPE` naming it (`details.requiredScope`).
 */
export function requireScope(req: Request, _res: Response, next: NextFunction): void {
  const needed = requiredScope(req.method, req.path);
  if (!(req as TenantRequest).key.scopes.includes(needed)) throw new InsufficientScopeError(needed);
  next();
}
