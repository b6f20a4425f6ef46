import { Body, Controller, Get, HttpCode, Inject, Param, Post, Query, Req, Res, Sse, UseGuards } from '@nestjs/common';
import type { Response } from 'express';
import type { Engine } from '../../../libs/engine';
import { TenantAuthGuard, type TenantRequest } from '../auth.guard';
import { GenerateWorldBody, WorldGenerationQuery } from '../bodies';
import { idempotencyKeyOf, REPLAYED_HEADER } from '../idempotency-key';
import { ENGINE } from '../tokens';
import { UuidParamPipe } from '../uuid-param.pipe';
import { ZodBodyPipe } from '../zod-body.pipe';
import { WorldGenerationEvents } from './world-generation-events';

/**
 * World creation from a description (issue 29): `POST /v1/worlds/generate` records the job and
 * enqueues it (202 with its id; a worker runs it, this process never calls a model), and the job's
 * progress as a long-poll, as Server-Sent Events, and its audit. Another tenant's job is a 404.
 */
@Controller('v1/worlds/generate')
@UseGuards(TenantAuthGuard)
export class WorldGenerationController {
  constructor(
    @Inject(ENGINE) private readonly engine: Engine,
    private readonly events: WorldGenerationEvents,
  ) {}

  @Post()
  @HttpCode(202)
  async generate(@Req() req: TenantRequest, @Res({ passthrough: true }) res: Response, @Body(new ZodBodyPipe(GenerateWorldBody)) body: GenerateWorldBody) {
    const idempotencyKey = idempotencyKeyOf(req);
    const { answer, replayed } = await this.engine.worldGeneration.request({
      tenantId: req.tenant.id,
      description: body.description,
      locale: body.locale,
      ...(body.slot === undefined ? {} : { slot: body.slot }),
      ...(body.plugins === undefined ? {} : { plugins: body.plugins }),
      ...(idempotencyKey === undefined ? {} : { idempotencyKey }),
    });
    res.setHeader('Location', `/v1/worlds/generate/${answer.jobId}`);
    if (replayed) res.setHeader(REPLAYED_HEADER, 'true');
    return answer;
  }

  /**
   * The job's progress. With `waitMs` (0..30000) a long-poll: answered as soon as the job is `done`
   * or `failed`, else after waitMs with its progress (or earlier if the client leaves).
   */
  @Get(':jobId')
  async progress(
    @Req() req: TenantRequest,
    @Res({ passthrough: true }) res: Response,
    @Param('jobId', new UuidParamPipe('world-generation')) jobId: string,
    @Query(new ZodBodyPipe(WorldGenerationQuery)) query: WorldGenerationQuery,
  ) {
    const left = new AbortController();
    res.once('close', () => left.abort());
    return this.engine.worldGeneration.wait({ tenantId: req.tenant.id, jobId, timeoutMs: query.waitMs ?? 0, signal: left.signal });
  }

  /** The job's progress as Server-Sent Events: `progress` at once and on each change; the stream ends after `done` or `failed`. */
  @Sse(':jobId/events')
  async progressEvents(@Req() req: TenantRequest, @Param('jobId', new UuidParamPipe('world-generation')) jobId: string) {
    await this.engine.worldGeneration.view(req.tenant.id, jobId); // a 404 before the stream opens
    return this.events.stream(req.tenant.id, jobId);
  }

  /** Every model call of the job derived again from the log and compared with the wire body recorded. */
  @Get(':jobId/audit')
  async audit(@Req() req: TenantRequest, @Param('jobId', new UuidParamPipe('world-generation')) jobId: string) {
    return this.engine.worldGeneration.audit(req.tenant.id, jobId);
  }
}
