import { Controller, Get, Inject, Query, Req, UseGuards } from '@nestjs/common';
import type { Engine } from '../../libs/engine';
import type { UsageReport } from '../../libs/usage';
import { TenantAuthGuard, TenantRequest } from './auth.guard';
import { UsageQuery } from './bodies';
import { ENGINE } from './tokens';
import { ZodBodyPipe } from './zod-body.pipe';

/**
 * `GET /v1/usage?from&to&groupBy=`: the tenant's own model calls, tokens and est. cost over a range
 * of UTC days, from the `usage` projection (an async view: it may lag the log by a moment).
 */
@Controller('v1')
@UseGuards(TenantAuthGuard)
export class UsageController {
  constructor(@Inject(ENGINE) private readonly engine: Engine) {}

  @Get('usage')
  usage(@Req() req: TenantRequest, @Query(new ZodBodyPipe(UsageQuery, '(query)')) query: UsageQuery): Promise<UsageReport> {
    return this.engine.usage.report({ tenantId: req.tenant.id, from: query.from, to: query.to, groupBy: query.groupBy });
  }
}
