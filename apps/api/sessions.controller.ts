import { Body, Controller, Get, HttpCode, Inject, Param, Patch, Post, Query, Req, Res, StreamableFile, UseGuards } from '@nestjs/common';
import type { Response } from 'express';
import { auditTurn, Engine, pluginSettingsIssues, SessionNotFoundError, unknownSlotIssues } from '../../libs/engine';
import { InvalidInputError, NotFoundError } from '../../libs/errors';
import { MEDIA_ID_PATTERN, ProjectionQuarantinedError, traceEventsProjection } from '../../libs/events';
import { prefixReportsProjection } from '../../libs/reports';
import { callerOf, TenantAuthGuard, TenantRequest } from './auth.guard';
import {
  ActivationBody,
  BranchSessionBody,
  CancelBody,
  CreateSessionBody,
  EditMessageBody,
  EmptyBody,
  ExecutionQuery,
  PreferencesPatchBody,
  ResumeBody,
  SelectAlternativeBody,
  SubmitInputBody,
  TextInputBody,
} from './bodies';
import { ExecutionWaits } from './execution-waits';
import { idempotencyKeyOf, REPLAYED_HEADER } from './idempotency-key';
import { ENGINE } from './tokens';
import { UuidParamPipe } from './uuid-param.pipe';
import { ZodBodyPipe } from './zod-body.pipe';

const sessionId = () => new UuidParamPipe('session');

/** An alternative's number in a path (1-based, as `GET …/alternatives` lists them): anything else names none (404). */
const ALTERNATIVE_NUMBER = /^[1-9][0-9]{0,5}$/;

/**
 * How long a read of an async view (llm-calls, prefix-report) waits for the projector to reach the
 * session's last event; then it answers what is there (the view catches up in the background).
 */
const VIEW_WAIT_MS = 2_000;

@Controller('v1')
@UseGuards(TenantAuthGuard)
export class SessionsController {
  constructor(
    @Inject(ENGINE) private readonly engine: Engine,
    private readonly waits: ExecutionWaits,
  ) {}

  @Post('sessions')
  @HttpCode(201)
  async createSession(@Req() req: TenantRequest, @Res({ passthrough: true }) res: Response, @Body(new ZodBodyPipe(CreateSessionBody)) body: CreateSessionBody) {
    const idempotencyKey = idempotencyKeyOf(req);
    const settingIssues = pluginSettingsIssues(this.engine.catalog.plugins, body.pluginSettings ?? {});
    if (settingIssues.length > 0) throw new InvalidInputError(settingIssues, 'INVALID_PLUGIN_SETTINGS');
    if (body.preferences) this.requireSlots(body.preferences.slots, 'preferences.slots');
    const { answer, replayed } = await this.engine.sessions.createSession({ tenantId: req.tenant.id, ...body, idempotencyKey });
    if (replayed) res.setHeader(REPLAYED_HEADER, 'true');
    return answer;
  }

  /**
   * Changes the player's preferences per model slot, recorded as `session.preferences-changed@1`:
   * turns accepted after it use them. Answers the preferences as they now are.
   */
  @Patch('sessions/:id/preferences')
  @HttpCode(200)
  async changePreferences(
    @Req() req: TenantRequest,
    @Param('id', sessionId()) id: string,
    @Body(new ZodBodyPipe(PreferencesPatchBody)) body: PreferencesPatchBody,
  ) {
    this.requireSlots(body.slots, 'slots');
    return this.engine.sessions.changePreferences({ tenantId: req.tenant.id, sessionId: id, patch: body });
  }

  @Post('sessions/:id/inputs')
  @HttpCode(202)
  async submitInput(
    @Req() req: TenantRequest,
    @Res({ passthrough: true }) res: Response,
    @Param('id', sessionId()) id: string,
    @Body(new ZodBodyPipe(SubmitInputBody, '(body)', { usual: TextInputBody })) body: SubmitInputBody,
  ) {
    const idempotencyKey = idempotencyKeyOf(req);
    const tenantId = req.tenant.id;
    // a new turn's execution: appended after this process LISTENs, so its long-poll here reads nothing until its end
    const { answer, replayed } = body.midTurn
      ? await this.engine.sessions.submitMidTurn({ tenantId, sessionId: id, text: body.text, idempotencyKey })
      : await this.waits.submitting(tenantId, () =>
          this.engine.sessions.submitInput({
            tenantId,
            sessionId: id,
            text: body.text,
            ...(body.formValues ? { formValues: body.formValues } : {}),
            idempotencyKey,
          }),
        );
    if (replayed) res.setHeader(REPLAYED_HEADER, 'true');
    return answer;
  }

  /** Runs a `schedule.trigger: manual` runtime as its own execution, its payload in `<runtime-activation>`. */
  @Post('sessions/:id/activations')
  @HttpCode(202)
  async activate(
    @Req() req: TenantRequest,
    @Res({ passthrough: true }) res: Response,
    @Param('id', sessionId()) id: string,
    @Body(new ZodBodyPipe(ActivationBody)) body: ActivationBody,
  ) {
    const idempotencyKey = idempotencyKeyOf(req);
    const tenantId = req.tenant.id;
    const { answer, replayed } = await this.waits.submitting(tenantId, () =>
      this.engine.activations.activateManual({ tenantId, sessionId: id, ...body, idempotencyKey }),
    );
    if (replayed) res.setHeader(REPLAYED_HEADER, 'true');
    return answer;
  }

  @Get('sessions/:id/messages')
  async messages(@Req() req: TenantRequest, @Param('id', sessionId()) id: string) {
    await this.requireSession(req, id);
    return this.engine.readModels.messages(req.tenant.id, id);
  }

  /**
   * The bytes of a generated asset of the session (`media` of a message), with its Content-Type.
   * Another tenant's session, or media of another session, is not found (404); a media id that is
   * not a UUID is refused naming the field (400). Media never change: cacheable, privately.
   */
  @Get('sessions/:id/media/:mediaId')
  async media(@Req() req: TenantRequest, @Res({ passthrough: true }) res: Response, @Param('id', sessionId()) id: string, @Param('mediaId') mediaId: string) {
    const wanted = typeof mediaId === 'string' ? mediaId.toLowerCase() : '';
    if (!MEDIA_ID_PATTERN.test(wanted)) throw new InvalidInputError([{ path: 'mediaId', message: 'must be a UUID' }], 'INVALID_MEDIA_ID');
    await this.requireSession(req, id);
    const item = await this.engine.media.get({ tenantId: req.tenant.id, sessionId: id, mediaId: wanted });
    if (!item) throw new NotFoundError('MEDIA_NOT_FOUND', `media ${wanted} not found`);
    res.setHeader('Cache-Control', 'private, max-age=31536000, immutable');
    res.setHeader('X-Content-Type-Options', 'nosniff');
    // a plugin chose the type: whatever it is (an SVG, HTML), it never runs as a page of the API's origin
    res.setHeader('Content-Security-Policy', "default-src 'none'; sandbox");
    return new StreamableFile(item.bytes, { type: item.mimeType, length: item.bytes.length });
  }

  @Get('sessions/:id/llm-calls')
  async llmCalls(@Req() req: TenantRequest, @Param('id', sessionId()) id: string) {
    await this.requireSession(req, id);
    await this.engine.projector.waitFor({ projection: traceEventsProjection.name, streamId: id, timeoutMs: VIEW_WAIT_MS });
    await this.requireWholeView(req, id, traceEventsProjection.name);
    return this.engine.readModels.llmCalls(req.tenant.id, id);
  }

  @Get('sessions/:id/prefix-report')
  async prefixReport(@Req() req: TenantRequest, @Param('id', sessionId()) id: string) {
    await this.requireSession(req, id);
    await this.engine.projector.waitFor({ projection: prefixReportsProjection.name, streamId: id, timeoutMs: VIEW_WAIT_MS });
    await this.requireWholeView(req, id, prefixReportsProjection.name);
    return this.engine.readModels.prefixReport(req.tenant.id, id);
  }

  /** 503 `PROJECTION_QUARANTINED` when the projection skipped an event of this session of this tenant (the view would be incomplete). */
  private async requireWholeView(req: TenantRequest, sessionId: string, projection: string): Promise<void> {
    const skipped = await this.engine.projector.quarantine.forStream({ tenantId: req.tenant.id, streamId: sessionId, projection });
    if (skipped.length > 0) throw new ProjectionQuarantinedError(projection, skipped);
  }

  @Get('sessions/:id/turns/:turnId/audit')
  async audit(@Req() req: TenantRequest, @Param('id', sessionId()) id: string, @Param('turnId', new UuidParamPipe('turn')) turnId: string) {
    await this.requireSession(req, id);
    const { store, catalog, generations, providers, media } = this.engine;
    return auditTurn(
      { store, catalog, generations, providers, media, worlds: this.engine.worlds, historyReadLimit: this.engine.config.historyMessageLimit },
      id,
      turnId,
    );
  }

  /** Regenerates the latest turn (any of its alternatives names it): `202 { executionId, turnId }` as for an input. */
  @Post('sessions/:id/turns/:turnId/retry')
  @HttpCode(202)
  async retryTurn(
    @Req() req: TenantRequest,
    @Res({ passthrough: true }) res: Response,
    @Param('id', sessionId()) id: string,
    @Param('turnId', new UuidParamPipe('turn')) turnId: string,
  ) {
    const idempotencyKey = idempotencyKeyOf(req);
    const tenantId = req.tenant.id;
    const { answer, replayed } = await this.waits.submitting(tenantId, () =>
      this.engine.alternatives.retry({ tenantId, sessionId: id, turnId, idempotencyKey }),
    );
    if (replayed) res.setHeader(REPLAYED_HEADER, 'true');
    return answer;
  }

  @Get('sessions/:id/turns/:turnId/alternatives')
  async turnAlternatives(@Req() req: TenantRequest, @Param('id', sessionId()) id: string, @Param('turnId', new UuidParamPipe('turn')) turnId: string) {
    return this.engine.alternatives.list({ tenantId: req.tenant.id, sessionId: id, turnId });
  }

  @Post('sessions/:id/turns/:turnId/select')
  @HttpCode(200)
  async selectAlternative(
    @Req() req: TenantRequest,
    @Res({ passthrough: true }) res: Response,
    @Param('id', sessionId()) id: string,
    @Param('turnId', new UuidParamPipe('turn')) turnId: string,
    @Body(new ZodBodyPipe(SelectAlternativeBody)) body: SelectAlternativeBody,
  ) {
    const idempotencyKey = idempotencyKeyOf(req);
    const { answer, replayed } = await this.engine.alternatives.select({
      tenantId: req.tenant.id,
      sessionId: id,
      turnId,
      alternativeId: body.alternativeId,
      idempotencyKey,
    });
    if (replayed) res.setHeader(REPLAYED_HEADER, 'true');
    return answer;
  }

  /** Selects the alternative numbered `n` (1: the turn as first played, in the order `GET …/alternatives` lists them). */
  @Post('sessions/:id/turns/:turnId/alternatives/:n/select')
  @HttpCode(200)
  async selectAlternativeNumber(
    @Req() req: TenantRequest,
    @Res({ passthrough: true }) res: Response,
    @Param('id', sessionId()) id: string,
    @Param('turnId', new UuidParamPipe('turn')) turnId: string,
    @Param('n') n: string,
    @Body(new ZodBodyPipe(EmptyBody)) _body: EmptyBody,
  ) {
    if (!ALTERNATIVE_NUMBER.test(n)) throw new NotFoundError('ALTERNATIVE_NOT_FOUND', 'alternative not found: n is a number from 1');
    const idempotencyKey = idempotencyKeyOf(req);
    const { answer, replayed } = await this.engine.alternatives.select({
      tenantId: req.tenant.id,
      sessionId: id,
      turnId,
      alternativeNumber: Number(n),
      idempotencyKey,
    });
    if (replayed) res.setHeader(REPLAYED_HEADER, 'true');
    return answer;
  }

  /** Undo: reverts the turn and every later one (`turn.reverted@1`); 200 `{ turnId, turnIds, executionIds }`. */
  @Post('sessions/:id/turns/:turnId/revert')
  @HttpCode(200)
  async revertTurn(
    @Req() req: TenantRequest,
    @Res({ passthrough: true }) res: Response,
    @Param('id', sessionId()) id: string,
    @Param('turnId', new UuidParamPipe('turn')) turnId: string,
    @Body(new ZodBodyPipe(EmptyBody)) _body: EmptyBody,
  ) {
    const idempotencyKey = idempotencyKeyOf(req);
    const { answer, replayed } = await this.engine.reverts.revert({ tenantId: req.tenant.id, sessionId: id, turnId, by: callerOf(req), idempotencyKey });
    if (replayed) res.setHeader(REPLAYED_HEADER, 'true');
    return answer;
  }

  /** Edits a committed player input or story text (`message.edited@1`); with `regenerate`, re-runs the latest turn with the edited input. */
  @Patch('sessions/:id/messages/:messageId')
  @HttpCode(200)
  async editMessage(
    @Req() req: TenantRequest,
    @Res({ passthrough: true }) res: Response,
    @Param('id', sessionId()) id: string,
    @Param('messageId', new UuidParamPipe('message')) messageId: string,
    @Body(new ZodBodyPipe(EditMessageBody)) body: EditMessageBody,
  ) {
    const idempotencyKey = idempotencyKeyOf(req);
    const { answer, replayed } = await this.engine.edits.edit({
      tenantId: req.tenant.id,
      sessionId: id,
      messageId,
      text: body.text,
      ...(body.regenerate === undefined ? {} : { regenerate: body.regenerate }),
      by: callerOf(req),
      idempotencyKey,
    });
    if (replayed) res.setHeader(REPLAYED_HEADER, 'true');
    return answer;
  }

  /**
   * Branches the session at a turn of its history: `201 { sessionId, parentSessionId, atTurnId }`,
   * a new session that starts with the parent's history up to that turn and its settings.
   */
  @Post('sessions/:id/branch')
  @HttpCode(201)
  async branch(
    @Req() req: TenantRequest,
    @Res({ passthrough: true }) res: Response,
    @Param('id', sessionId()) id: string,
    @Body(new ZodBodyPipe(BranchSessionBody)) body: BranchSessionBody,
  ) {
    const idempotencyKey = idempotencyKeyOf(req);
    const { answer, replayed } = await this.engine.branches.branch({
      tenantId: req.tenant.id,
      sessionId: id,
      atTurnId: body.atTurnId,
      by: callerOf(req),
      idempotencyKey,
    });
    if (replayed) res.setHeader(REPLAYED_HEADER, 'true');
    return answer;
  }

  /**
   * The execution's state. With `waitMs` (0..30000) a long-poll: answered as soon as the execution has
   * ended (committed, failed or cancelled), else after waitMs with its current state (or earlier if the client leaves).
   */
  @Get('executions/:id')
  async execution(
    @Req() req: TenantRequest,
    @Res({ passthrough: true }) res: Response,
    @Param('id', new UuidParamPipe('execution')) id: string,
    @Query(new ZodBodyPipe(ExecutionQuery)) query: ExecutionQuery,
  ) {
    // the response's close (the client left, or the answer went out) ends the wait: answered at once
    const onLeave = (leave: () => void) => {
      res.once('close', leave);
      return () => void res.off('close', leave);
    };
    const execution = await this.waits.wait({ tenantId: req.tenant.id, executionId: id, timeoutMs: query.waitMs ?? 0, onLeave });
    if (!execution) throw new NotFoundError('EXECUTION_NOT_FOUND', `execution ${id} not found`);
    return execution;
  }

  /** Resumes an execution a runtime suspended on a tool (`status: waiting`): 404 unknown or another tenant's, 409 not waiting. */
  @Post('executions/:id/resume')
  @HttpCode(202)
  async resume(
    @Req() req: TenantRequest,
    @Res({ passthrough: true }) res: Response,
    @Param('id', new UuidParamPipe('execution')) id: string,
    @Body(new ZodBodyPipe(ResumeBody)) body: ResumeBody,
  ) {
    const idempotencyKey = idempotencyKeyOf(req);
    const { answer, replayed } = await this.engine.resumes.resume({ tenantId: req.tenant.id, executionId: id, payload: body.payload, idempotencyKey });
    if (replayed) res.setHeader(REPLAYED_HEADER, 'true');
    return answer;
  }

  /**
   * Stops an execution (queued, running or waiting): its model call is aborted, `execution.cancelled@1`
   * recorded, the session's next input taken at once; with `keepPartial` the story text streamed so
   * far is kept as the turn's. 404 unknown or another tenant's, 409 `EXECUTION_ENDED` when it has
   * committed or failed first; a cancelled one answers its first cancel.
   */
  @Post('executions/:id/cancel')
  @HttpCode(200)
  async cancel(
    @Req() req: TenantRequest,
    @Res({ passthrough: true }) res: Response,
    @Param('id', new UuidParamPipe('execution')) id: string,
    @Body(new ZodBodyPipe(CancelBody)) body: CancelBody,
  ) {
    const idempotencyKey = idempotencyKeyOf(req);
    const { answer, replayed } = await this.engine.cancels.cancel({
      tenantId: req.tenant.id,
      executionId: id,
      ...(body.keepPartial !== undefined ? { keepPartial: body.keepPartial } : {}),
      by: callerOf(req),
      idempotencyKey,
    });
    if (replayed) res.setHeader(REPLAYED_HEADER, 'true');
    return answer;
  }

  /** Preferences name `llm.toml`'s slots only: another name is a 400 naming it (`UNKNOWN_SLOT`). */
  private requireSlots(slots: Readonly<Record<string, unknown>>, path: string) {
    const issues = unknownSlotIssues(Object.keys(this.engine.providers.config.slots), slots, path);
    if (issues.length > 0) throw new InvalidInputError(issues, 'UNKNOWN_SLOT');
  }

  private async requireSession(req: TenantRequest, id: string) {
    if (!(await this.engine.sessions.owns(req.tenant.id, id))) throw new SessionNotFoundError(id);
  }
}
