import { Controller, Get, Inject, Param, Query, Req, UseGuards } from '@nestjs/common';
import { type Engine, SessionNotFoundError, TurnNotFoundError } from '../../libs/engine';
import { hasTurn, inspectTurnCalls, sessionTurns, withCallCosts, withTurnCosts, withTurnReverts } from '../../libs/reports';
import { MAX_LISTED_BRANCHES, type SessionDetailAnswer, sessionSummaries } from './session-summaries';
import { TenantAuthGuard, TenantRequest } from './auth.guard';
import { SessionListQuery } from './bodies';
import { ENGINE } from './tokens';
import { UuidParamPipe } from './uuid-param.pipe';
import { ZodBodyPipe } from './zod-body.pipe';

const DEFAULT_SESSION_LIST = 50;

/**
 * The read views of the web inspector (`/inspector`): the tenant's sessions, a session's turns, and
 * every model call of a turn as the model saw it. Turns and calls are derived from the session's
 * events (read from the log, so they never lag it; a reverted turn is listed, marked); the list reads the log's `session.created@1`,
 * and each session's history use (uncompacted messages against the limit) from the projections.
 */
@Controller('v1')
@UseGuards(TenantAuthGuard)
export class SessionViewsController {
  constructor(@Inject(ENGINE) private readonly engine: Engine) {}

  @Get('sessions')
  async sessions(@Req() req: TenantRequest, @Query(new ZodBodyPipe(SessionListQuery)) query: SessionListQuery) {
    const sessions = await this.engine.readModels.sessions(req.tenant.id, query.limit ?? DEFAULT_SESSION_LIST);
    return sessionSummaries({ engine: this.engine, tenantId: req.tenant.id, sessions });
  }

  /** One session as the list gives it, with its history use (`history.state`: `ok`, `warning`, `full`) and its branches. */
  @Get('sessions/:id')
  async session(@Req() req: TenantRequest, @Param('id', new UuidParamPipe('session')) id: string): Promise<SessionDetailAnswer> {
    const session = await this.engine.readModels.session(req.tenant.id, id);
    if (!session) throw new SessionNotFoundError(id);
    const [[answer], branches] = await Promise.all([
      sessionSummaries({ engine: this.engine, tenantId: req.tenant.id, sessions: [session] }),
      this.engine.readModels.sessionBranches(req.tenant.id, id, MAX_LISTED_BRANCHES),
    ]);
    return { ...answer, branches };
  }

  @Get('sessions/:id/turns')
  async turns(@Req() req: TenantRequest, @Param('id', new UuidParamPipe('session')) id: string) {
    const events = await this.events(req, id);
    // a turn an undo took out of the story stays listed, marked with who reverted it and when
    return withTurnReverts(withTurnCosts(sessionTurns(events), events, this.engine.prices), events);
  }

  @Get('sessions/:id/turns/:turnId/calls')
  async calls(@Req() req: TenantRequest, @Param('id', new UuidParamPipe('session')) id: string, @Param('turnId', new UuidParamPipe('turn')) turnId: string) {
    const events = await this.events(req, id);
    if (!hasTurn(events, turnId)) throw new TurnNotFoundError(turnId);
    return withCallCosts(inspectTurnCalls(events, turnId), this.engine.prices);
  }

  private async events(req: TenantRequest, id: string) {
    if (!(await this.engine.sessions.owns(req.tenant.id, id))) throw new SessionNotFoundError(id);
    return this.engine.store.readStream(id);
  }
}
