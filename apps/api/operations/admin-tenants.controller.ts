import { Body, type CanActivate, Controller, Delete, Get, HttpCode, Inject, Injectable, Param, Post, Put, UseGuards } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import type { Engine, TenantLimitsView } from '../../../libs/engine';
import { EngineError, NotFoundError } from '../../../libs/errors';
import { type ApiKeyView, type Tenant, type TenantLimits, TenantNotFoundError } from '../../../libs/events';
import { TenantLimitsBodyPipe } from '../limits/tenant-limits-body';
import { CreateKeyBody, CreateTenantBody } from '../bodies';
import type { CreatedKeyView } from '../keys.controller';
import { ENGINE } from '../tokens';
import { UuidParamPipe } from '../uuid-param.pipe';
import { ZodBodyPipe } from '../zod-body.pipe';
import { isAdminKey, presentedKey } from './admin-key';

/** Where the operator's tenant routes are (with `COVEL_ADMIN_API_KEY` set). */
export const ADMIN_TENANTS_PATH = '/admin/tenants';

/** Requests the operator's key opened (set by `operatorGate`, checked again by the guard). */
const operatorRequests = new WeakSet<Request>();

/** 401 for anything but the operator's key (`Authorization: Bearer` or Basic), as the other admin routes answer. */
export class AdminKeyRequiredError extends EngineError {
  readonly code = 'ADMIN_KEY_REQUIRED';
  readonly category = 'unauthenticated';
  constructor() {
    super('the admin key (COVEL_ADMIN_API_KEY) is required here');
  }
}

/**
 * Before any body byte of `/admin/tenants…` is read: the operator's key, or a 401 (a tenant's key
 * too); without `COVEL_ADMIN_API_KEY` the routes do not exist (404).
 */
export function operatorGate(engine: Engine) {
  return (req: Request, _res: Response, next: NextFunction): void => {
    const adminKey = engine.config.adminApiKey;
    if (!adminKey) throw new NotFoundError('NOT_FOUND', 'not found');
    if (!isAdminKey(presentedKey(req.headers.authorization), adminKey)) throw new AdminKeyRequiredError();
    operatorRequests.add(req);
    next();
  };
}

/** No route of the operator is reached without `operatorGate` having let the request through. */
@Injectable()
export class OperatorGuard implements CanActivate {
  canActivate(context: Parameters<CanActivate['canActivate']>[0]): boolean {
    if (!operatorRequests.has(context.switchToHttp().getRequest<Request>())) throw new AdminKeyRequiredError();
    return true;
  }
}

/**
 * The operator's tenants (issue 32), behind `COVEL_ADMIN_API_KEY`: make a tenant (with its first
 * key, every scope, answered once), list them, and make, list and revoke a tenant's keys (the
 * operator may revoke a tenant's last admin key), read and set a tenant's limits (request rate,
 * executions in flight, spend budget; in force on every API process within `LIMITS_CACHE_MS`).
 * Every change is an event of `tenant:<tenantId>`, `by: operator`.
 */
@Controller('admin/tenants')
@UseGuards(OperatorGuard)
export class AdminTenantsController {
  constructor(@Inject(ENGINE) private readonly engine: Engine) {}

  @Post()
  @HttpCode(201)
  async create(@Body(new ZodBodyPipe(CreateTenantBody)) body: CreateTenantBody): Promise<{ tenant: Tenant; key: CreatedKeyView }> {
    const { tenant, apiKey, key } = await this.engine.tenants.create(body.name, undefined, { by: 'operator' });
    return { tenant, key: { ...key, key: apiKey } };
  }

  @Get()
  async list(): Promise<{ tenants: (Tenant & { createdAt: string })[] }> {
    return { tenants: await this.engine.tenants.list() };
  }

  @Post(':id/keys')
  @HttpCode(201)
  async createKey(@Param('id', new UuidParamPipe('tenant')) id: string, @Body(new ZodBodyPipe(CreateKeyBody)) body: CreateKeyBody): Promise<CreatedKeyView> {
    const { apiKey, key } = await this.engine.tenants.createKey({ tenantId: id, name: body.name, scopes: body.scopes, by: 'operator' });
    return { ...key, key: apiKey };
  }

  @Get(':id/keys')
  async listKeys(@Param('id', new UuidParamPipe('tenant')) id: string): Promise<{ keys: ApiKeyView[] }> {
    if (!(await this.engine.tenants.get(id))) throw new TenantNotFoundError();
    return { keys: await this.engine.tenants.listKeys(id) };
  }

  @Delete(':id/keys/:keyId')
  async revokeKey(@Param('id', new UuidParamPipe('tenant')) id: string, @Param('keyId', new UuidParamPipe('api-key')) keyId: string): Promise<ApiKeyView> {
    return this.engine.tenants.revokeKey({ tenantId: id, keyId, by: 'operator', keepLastAdmin: false });
  }

  @Get(':id/limits')
  async limits(@Param('id', new UuidParamPipe('tenant')) id: string): Promise<TenantLimitsView> {
    return this.engine.limits.view(id);
  }

  @Put(':id/limits')
  async setLimits(@Param('id', new UuidParamPipe('tenant')) id: string, @Body(new TenantLimitsBodyPipe()) limits: TenantLimits): Promise<TenantLimitsView> {
    return this.engine.limits.change({ tenantId: id, limits, by: 'operator' });
  }
}
