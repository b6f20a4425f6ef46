import { type CanActivate, type ExecutionContext, Injectable } from '@nestjs/common';
import type { Request } from 'express';
import type { Tenant } from '../../libs/events';
import { UnauthenticatedError } from './request-errors';

/** `keyId`: the caller's API key as limits count it (a prefix of its hash, never the key). */
export type TenantRequest = Request & { tenant: Tenant; keyId: string };

/** Who made the request, as the log records it (`by` of a revert, an edit): the tenant its key belongs to. */
export function callerOf(req: TenantRequest): string {
  return `tenant:${req.tenant.id}`;
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
