import { Controller, Inject, Param, Req, Sse, SseSignal, UseGuards } from '@nestjs/common';
import { type Engine, SessionNotFoundError } from '../../../libs/engine';
import { TenantAuthGuard, type TenantRequest } from '../auth.guard';
import { ENGINE } from '../tokens';
import { UuidParamPipe } from '../uuid-param.pipe';
import { parseEventId, parseStreamFrom } from './event-id';
import { SessionEvents } from './session-events.service';

/**
 * `GET /v1/sessions/:id/events`: the session as Server-Sent Events (Nest's `@Sse` over an rxjs
 * Observable: its SseStream does the framing, deferred headers let a 404 or a 429 still be a JSON
 * error, comment-only messages are the heartbeats). Where it starts:
 *  - `Last-Event-ID` (header, or the `lastEventId` query parameter for clients that cannot set
 *    headers): resumes after it, exactly (see `SessionFeed`); it wins over `from`, since a
 *    reconnecting EventSource sends it with the URL it first opened;
 *  - `?from=start` (or `0`): the whole session; `?from=<position>`: the log from that event id on;
 *  - neither: live, at the session's latest committed turn (or its earliest pending input, when
 *    earlier: `ReadModels.liveStreamStart`), so an idle client does not replay the session.
 */
@Controller('v1')
@UseGuards(TenantAuthGuard)
export class SessionEventsController {
  constructor(
    @Inject(ENGINE) private readonly engine: Engine,
    private readonly events: SessionEvents,
  ) {}

  @Sse('sessions/:id/events')
  async sessionEvents(@Req() req: TenantRequest, @Param('id', new UuidParamPipe('session')) id: string, @SseSignal() signal: AbortSignal) {
    const from = parseStreamFrom(req.query.from); // a bad one is a 400 even with a good Last-Event-ID
    const tenantId = req.tenant.id;
    if (!(await this.engine.sessions.owns(tenantId, id))) throw new SessionNotFoundError(id);
    const header = req.headers['last-event-id'];
    const query = req.query.lastEventId;
    const resume = parseEventId(typeof header === 'string' ? header : typeof query === 'string' ? query : undefined);
    let startAfter = 0;
    if (!resume && from !== null) startAfter = from;
    else if (!resume) startAfter = ((await this.engine.readModels.liveStreamStart(tenantId, id)) ?? 1) - 1;
    return this.events.stream({ tenantId, keyId: req.keyId, sessionId: id, resume, startAfter, signal });
  }
}
