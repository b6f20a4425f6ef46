import { Controller, Inject, Param, Req, Sse, UseGuards } from '@nestjs/common';
import { type Engine, SessionNotFoundError } from '../../../libs/engine';
import { TenantAuthGuard, type TenantRequest } from '../auth.guard';
import { ENGINE } from '../tokens';
import { UuidParamPipe } from '../uuid-param.pipe';
import { parseEventId } from './event-id';
import { SessionEvents } from './session-events.service';

/**
 * `GET /v1/sessions/:id/events`: the session as Server-Sent Events (Nest's `@Sse` over an rxjs
 * Observable: its SseStream does the framing, deferred headers let a 404 still be a JSON error,
 * comment-only messages are the heartbeats). Resumes after `Last-Event-ID` (header, or the
 * `lastEventId` query parameter for clients that cannot set headers). See `SessionFeed` for
 * the ids and what a resume guarantees.
 */
@Controller('v1')
@UseGuards(TenantAuthGuard)
export class SessionEventsController {
  constructor(
    @Inject(ENGINE) private readonly engine: Engine,
    private readonly events: SessionEvents,
  ) {}

  @Sse('sessions/:id/events')
  async sessionEvents(@Req() req: TenantRequest, @Param('id', new UuidParamPipe('session')) id: string) {
    if (!(await this.engine.sessions.owns(req.tenant.id, id))) throw new SessionNotFoundError(id);
    const header = req.headers['last-event-id'];
    const query = req.query.lastEventId;
    const lastEventId = typeof header === 'string' ? header : typeof query === 'string' ? query : undefined;
    return this.events.stream(id, parseEventId(lastEventId));
  }
}
