import {
  Body,
  Controller,
  Delete,
  Get,
  HttpCode,
  Inject,
  Param,
  Patch,
  Post,
  Put,
  Query,
  Req,
  Res,
  StreamableFile,
  UploadedFile,
  UseGuards,
  UseInterceptors,
} from '@nestjs/common';
import type { Response } from 'express';
import type { Engine, WorldView } from '../../libs/engine';
import { TenantAuthGuard, TenantRequest } from './auth.guard';
import { WorldExportQuery, WorldListQuery, WorldQuery, WorldRevisionBody } from './bodies';
import { rawBodyOf } from './capped-body';
import { WorldFileInterceptor } from './world-file.interceptor';
import { InvalidInputError } from '../../libs/errors';
import { idempotencyKeyOf, REPLAYED_HEADER } from './idempotency-key';
import { ifMatchRevision, revisionTag } from './if-match';
import { ENGINE } from './tokens';
import { UuidParamPipe } from './uuid-param.pipe';
import { WorldIdPipe } from './world-id.pipe';
import { ZodBodyPipe } from './zod-body.pipe';

/**
 * A tenant's worlds (issue 29): create, list, read (any revision), replace (`PUT` with `If-Match`),
 * change (`PATCH`, JSON Merge Patch, with `If-Match`), archive (`DELETE`). The deployment's built-in
 * worlds are listed and read beside the tenant's, read-only. Another tenant's world is a 404 everywhere.
 */
@Controller('v1')
@UseGuards(TenantAuthGuard)
export class WorldsController {
  constructor(@Inject(ENGINE) private readonly engine: Engine) {}

  @Post('worlds')
  @HttpCode(201)
  async create(@Req() req: TenantRequest, @Res({ passthrough: true }) res: Response, @Body() body: unknown) {
    const { answer, replayed } = await this.engine.worlds.create({ tenantId: req.tenant.id, document: body, ...this.key(req) });
    res.setHeader('Location', `/v1/worlds/${answer.id}`);
    return this.answer(res, answer, replayed);
  }

  /**
   * A world from a file: a character card (V2 or V3, PNG or JSON) or a WORLD.md folder as a zip —
   * the raw body (any content type; the content is sniffed) or a multipart form's `file`. A bad
   * file is a 400 (413 past the limit) naming what is wrong, and creates nothing.
   */
  @Post('worlds/import')
  @HttpCode(201)
  @UseInterceptors(WorldFileInterceptor)
  async import(@Req() req: TenantRequest, @Res({ passthrough: true }) res: Response, @UploadedFile() file: { buffer: Buffer; mimetype: string } | undefined) {
    const multipart = /^multipart\//i.test(req.headers['content-type'] ?? '');
    const bytes = multipart ? (file?.buffer ?? null) : rawBodyOf(req);
    if (bytes === null)
      throw new InvalidInputError([{ path: '(body)', message: 'send the file as the body, or as the `file` field of a multipart form' }], 'EMPTY_BODY');
    const contentType = file?.mimetype ?? req.headers['content-type'];
    const { answer, replayed } = await this.engine.worlds.import({
      tenantId: req.tenant.id,
      bytes: new Uint8Array(bytes),
      ...(contentType ? { contentType } : {}),
      ...this.key(req),
    });
    res.setHeader('Location', `/v1/worlds/${answer.id}`);
    return this.answer(res, answer, replayed);
  }

  /** The world (now, or at `revision`) as a file: its WORLD.md folder as a zip, or a character card (JSON or PNG). */
  @Get('worlds/:id/export')
  async export(
    @Req() req: TenantRequest,
    @Res({ passthrough: true }) res: Response,
    @Param('id', new WorldIdPipe()) id: string,
    @Query(new ZodBodyPipe(WorldExportQuery, '(query)')) query: WorldExportQuery,
  ) {
    const file = await this.engine.worlds.export({
      tenantId: req.tenant.id,
      worldId: id,
      format: query.format,
      ...(query.container ? { container: query.container } : {}),
      ...(query.revision === undefined ? {} : { revision: query.revision }),
    });
    res.setHeader('Content-Disposition', `attachment; filename="${file.fileName.replace(/[^\x20-\x7e]|"/g, '_')}"`);
    res.setHeader('X-Content-Type-Options', 'nosniff');
    return new StreamableFile(file.bytes, { type: file.contentType, length: file.bytes.length });
  }

  @Get('worlds')
  async list(@Req() req: TenantRequest, @Query(new ZodBodyPipe(WorldListQuery, '(query)')) query: WorldListQuery) {
    return this.engine.worlds.list({
      tenantId: req.tenant.id,
      limit: query.limit,
      ...(query.cursor === undefined ? {} : { cursor: query.cursor }),
      ...(query.archived ? { archived: true } : {}),
    });
  }

  @Get('worlds/:id')
  async get(
    @Req() req: TenantRequest,
    @Res({ passthrough: true }) res: Response,
    @Param('id', new WorldIdPipe()) id: string,
    @Query(new ZodBodyPipe(WorldQuery, '(query)')) query: WorldQuery,
  ) {
    const view = await this.engine.worlds.get({ tenantId: req.tenant.id, worldId: id, ...(query.revision === undefined ? {} : { revision: query.revision }) });
    return this.answer(res, view, false);
  }

  @Put('worlds/:id')
  @HttpCode(200)
  async replace(@Req() req: TenantRequest, @Res({ passthrough: true }) res: Response, @Param('id', new WorldIdPipe()) id: string, @Body() body: unknown) {
    const { answer, replayed } = await this.engine.worlds.replace({
      tenantId: req.tenant.id,
      worldId: id,
      document: body,
      ifMatch: ifMatchRevision(req),
      ...this.key(req),
    });
    return this.answer(res, answer, replayed);
  }

  @Patch('worlds/:id')
  @HttpCode(200)
  async patch(@Req() req: TenantRequest, @Res({ passthrough: true }) res: Response, @Param('id', new WorldIdPipe()) id: string, @Body() body: unknown) {
    const { answer, replayed } = await this.engine.worlds.patch({
      tenantId: req.tenant.id,
      worldId: id,
      patch: body,
      ifMatch: ifMatchRevision(req),
      ...this.key(req),
    });
    return this.answer(res, answer, replayed);
  }

  @Delete('worlds/:id')
  @HttpCode(200)
  async archive(@Req() req: TenantRequest, @Res({ passthrough: true }) res: Response, @Param('id', new WorldIdPipe()) id: string) {
    const { answer, replayed } = await this.engine.worlds.archive({ tenantId: req.tenant.id, worldId: id, ...this.key(req) });
    return this.answer(res, answer, replayed);
  }

  /** Moves the session to a newer revision of its world, on purpose (recorded): the turns accepted after it read that revision. */
  @Post('sessions/:id/world-revision')
  @HttpCode(200)
  async moveSession(
    @Req() req: TenantRequest,
    @Res({ passthrough: true }) res: Response,
    @Param('id', new UuidParamPipe('session')) id: string,
    @Body(new ZodBodyPipe(WorldRevisionBody)) body: WorldRevisionBody,
  ) {
    const { answer, replayed } = await this.engine.worlds.moveSession({ tenantId: req.tenant.id, sessionId: id, ...body, ...this.key(req) });
    if (replayed) res.setHeader(REPLAYED_HEADER, 'true');
    return answer;
  }

  private key(req: TenantRequest): { idempotencyKey?: string } {
    const idempotencyKey = idempotencyKeyOf(req);
    return idempotencyKey === undefined ? {} : { idempotencyKey };
  }

  private answer(res: Response, view: WorldView, replayed: boolean): WorldView {
    res.setHeader('ETag', revisionTag(view.revision));
    if (replayed) res.setHeader(REPLAYED_HEADER, 'true');
    return view;
  }
}
