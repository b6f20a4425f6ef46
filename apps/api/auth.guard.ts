import { CanActivate, ExecutionContext, Inject, Injectable, UnauthorizedException } from '@nestjs/common';
import type { Request } from 'express';
import type { Engine } from '../../libs/engine';
import type { Tenant } from '../../libs/events';
import { ENGINE } from './tokens';

export type TenantRequest = Request & { tenant: Tenant };

/** `Authorization: Bearer <tenant api key>` on every /v1 route; the key is looked up by its hash. */
@Injectable()
export class TenantAuthGuard implements CanActivate {
  constructor(@Inject(ENGINE) private readonly engine: Engine) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<TenantRequest>();
    const header = request.headers.authorization ?? '';
    const match = /^Bearer\s+(\S+)$/i.exec(header);
    if (!match) throw new UnauthorizedException('missing Authorization: Bearer <api key>');
    const tenant = await this.engine.tenants.findByApiKey(match[1]);
    if (!tenant) throw new UnauthorizedException('unknown api key');
    request.tenant = tenant;
    return true;
  }
}
