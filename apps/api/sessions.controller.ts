import { Body, Controller, Get, HttpCode, Inject, Param, Post, Req, UseGuards } from '@nestjs/common';
import { auditTurn, DEFAULT_HISTORY_READ_LIMIT, Engine, SessionNotFoundError } from '../../libs/engine';
import { InvalidInputError, NotFoundError } from '../../libs/errors';
import { TenantAuthGuard, TenantRequest } from './auth.guard';
import { CreateSessionBody, SubmitInputBody } from './bodies';
import { ENGINE } from './tokens';
import { UuidParamPipe } from './uuid-param.pipe';
import { ZodBodyPipe } from './zod-body.pipe';

const sessionId = () => new UuidParamPipe('session');

@Controller('v1')
@UseGuards(TenantAuthGuard)
export class SessionsController {
  constructor(@Inject(ENGINE) private readonly engine: Engine) {}

  @Post('sessions')
  @HttpCode(201)
  createSession(@Req() req: TenantRequest, @Body(new ZodBodyPipe(CreateSessionBody)) body: CreateSessionBody) {
    if (body.worldId !== undefined && !this.engine.worlds.has(body.worldId)) {
      throw new InvalidInputError([{ path: 'worldId', message: `unknown world ${JSON.stringify(body.worldId)}` }], 'UNKNOWN_WORLD');
    }
    return this.engine.sessions.createSession(req.tenant.id, body);
  }

  @Post('sessions/:id/inputs')
  @HttpCode(202)
  submitInput(@Req() req: TenantRequest, @Param('id', sessionId()) id: string, @Body(new ZodBodyPipe(SubmitInputBody)) body: SubmitInputBody) {
    return this.engine.sessions.submitInput(req.tenant.id, id, body.text);
  }

  @Get('sessions/:id/messages')
  async messages(@Req() req: TenantRequest, @Param('id', sessionId()) id: string) {
    await this.requireSession(req, id);
    return this.engine.readModels.messages(req.tenant.id, id);
  }

  @Get('sessions/:id/llm-calls')
  async llmCalls(@Req() req: TenantRequest, @Param('id', sessionId()) id: string) {
    await this.requireSession(req, id);
    return this.engine.readModels.llmCalls(req.tenant.id, id);
  }

  @Get('sessions/:id/prefix-report')
  async prefixReport(@Req() req: TenantRequest, @Param('id', sessionId()) id: string) {
    await this.requireSession(req, id);
    return this.engine.readModels.prefixReport(req.tenant.id, id);
  }

  @Get('sessions/:id/turns/:turnId/audit')
  async audit(@Req() req: TenantRequest, @Param('id', sessionId()) id: string, @Param('turnId', new UuidParamPipe('turn')) turnId: string) {
    await this.requireSession(req, id);
    const { store, catalog, providers } = this.engine;
    return auditTurn({ store, catalog, providers, worlds: this.engine.worlds, historyReadLimit: DEFAULT_HISTORY_READ_LIMIT }, id, turnId);
  }

  @Get('executions/:id')
  async execution(@Req() req: TenantRequest, @Param('id', new UuidParamPipe('execution')) id: string) {
    const execution = await this.engine.readModels.execution(req.tenant.id, id);
    if (!execution) throw new NotFoundError('EXECUTION_NOT_FOUND', `execution ${id} not found`);
    return execution;
  }

  private async requireSession(req: TenantRequest, id: string) {
    if (!(await this.engine.sessions.owns(req.tenant.id, id))) throw new SessionNotFoundError(id);
  }
}
