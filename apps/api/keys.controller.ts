import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Post, Req, UseGuards } from '@nestjs/common';
import type { Engine } from '../../libs/engine';
import type { ApiKeyView } from '../../libs/events';
import { callerOf, TenantAuthGuard, TenantRequest } from './auth.guard';
import { CreateKeyBody } from './bodies';
import { ENGINE } from './tokens';
import { UuidParamPipe } from './uuid-param.pipe';
import { ZodBodyPipe } from './zod-body.pipe';

/** A key as created: the view, and the key itself (answered this once; only its HMAC is kept). */
export type CreatedKeyView = ApiKeyView & { key: string };

/**
 * The tenant's API keys (issue 32), for a key with the `admin` scope (scopes.ts): make one (the key
 * is answered once), list them (never a key or its hash), revoke one (every API process refuses it
 * within a second). Each change is an event of the stream `tenant:<tenantId>`, `by` the key that
 * made it. Another tenant's key id is a 404. A tenant's key cannot revoke the tenant's last admin
 * key (409 `LAST_ADMIN_KEY`): the operator can (`DELETE /admin/tenants/:id/keys/:keyId`).
 */
@Controller('v1/keys')
@UseGuards(TenantAuthGuard)
export class KeysController {
  constructor(@Inject(ENGINE) private readonly engine: Engine) {}

  @Post()
  @HttpCode(201)
  async create(@Req() req: TenantRequest, @Body(new ZodBodyPipe(CreateKeyBody)) body: CreateKeyBody): Promise<CreatedKeyView> {
    const { apiKey, key } = await this.engine.tenants.createKey({ tenantId: req.tenant.id, name: body.name, scopes: body.scopes, by: callerOf(req) });
    return { ...key, key: apiKey };
  }

  @Get()
  async list(@Req() req: TenantRequest): Promise<{ keys: ApiKeyView[] }> {
    return { keys: await this.engine.tenants.listKeys(req.tenant.id) };
  }

  @Delete(':id')
  async revoke(@Req() req: TenantRequest, @Param('id', new UuidParamPipe('api-key')) id: string): Promise<ApiKeyView> {
    return this.engine.tenants.revokeKey({ tenantId: req.tenant.id, keyId: id, by: callerOf(req), keepLastAdmin: true });
  }
}
