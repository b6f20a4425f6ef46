import { Controller, Get, Inject, Req, UseGuards } from '@nestjs/common';
import type { Engine } from '../../../libs/engine';
import { type TenantRequest, TenantAuthGuard } from '../auth.guard';
import { ENGINE } from '../tokens';

/** `GET /v1/limits`: the calling tenant's own limits (what the operator set, and what is in force with the defaults). */
@Controller('v1')
@UseGuards(TenantAuthGuard)
export class LimitsController {
  constructor(@Inject(ENGINE) private readonly engine: Engine) {}

  @Get('limits')
  async limits(@Req() req: TenantRequest) {
    return this.engine.limits.view(req.tenant.id);
  }
}
