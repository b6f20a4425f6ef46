import { type CanActivate, type ExecutionContext, Injectable } from '@nestjs/common';
import type { Request } from 'express';
import type { AuthenticatedKey, Tenant } from '../../libs/events';
import { UnauthenticatedError } from './request-errors';

/** `key`: the API key the request presented (its id and scopes, never the key); `keyId`: its id (what limits count). */
export type TenantRequest = Request & { tenant: Tenant; key: AuthenticatedKey; keyId: string };

/**
 * Who made the request, as the log records it (`by` of a revert, an edit, a key made): the API key,
 * `key:<keyId>`. Events from before issue 32 say `tenant:<tenantId>` (the tenant had one key).
 */
export function callerOf(req: TenantRequest): `key:${string}` {
  return `key:${req.key.id}`;
}

/**
 * Every /v1 route needs a tenant. The key is checked by `authenticateTenant` (request-gate.ts) before any
 * body byte is read; this guard makes sure no route is reached without it.
 */
@Injectable()
export class TenantAuthGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<Partial<TenantRequest>>();
    if (!request.tenant) throw new UnauthenticatedError('MISSING_API_KEY', 'missing Authorization: Bearer <api key>');
    return true;
  }
}
