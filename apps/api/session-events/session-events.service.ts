import { BeforeApplicationShutdown, Inject, Injectable, type MessageEvent } from '@nestjs/common';
import { Observable } from 'rxjs';
import type { Engine } from '../../../libs/engine';
import { ENGINE } from '../tokens';
import type { ResumePoint } from './event-id';
import { SessionFeed } from './session-feed';

/** Timings of the session event streams (tests shorten them). */
export interface SessionEventsTimings {
  pollIntervalMs: number;
  heartbeatMs: number;
}

export const SESSION_EVENTS_TIMINGS = Symbol('SESSION_EVENTS_TIMINGS');
export const DEFAULT_SESSION_EVENTS_TIMINGS: SessionEventsTimings = { pollIntervalMs: 500, heartbeatMs: 15_000 };

/**
 * The open event streams of this API process: each one a `SessionFeed` following the session's
 * log in the database (not this process's memory: any API process serves any stream). On
 * shutdown (`app.close()`, on SIGTERM through `closeOnSignals`) every stream is completed
 * before the HTTP server closes, so clients see a clean end and reconnect elsewhere with
 * `Last-Event-ID`.
 */
@Injectable()
export class SessionEvents implements BeforeApplicationShutdown {
  private readonly feeds = new Set<SessionFeed>();
  private closing = false;

  constructor(
    @Inject(ENGINE) private readonly engine: Engine,
    @Inject(SESSION_EVENTS_TIMINGS) private readonly timings: SessionEventsTimings,
  ) {}

  stream(sessionId: string, resume: ResumePoint | null): Observable<MessageEvent> {
    return new Observable<MessageEvent>((subscriber) => {
      if (this.closing) {
        subscriber.complete();
        return undefined;
      }
      const feed = new SessionFeed({
        store: this.engine.store,
        deltas: this.engine.deltas,
        sessionId,
        resume,
        send: (message) => subscriber.next(message),
        pollIntervalMs: this.timings.pollIntervalMs,
        heartbeatMs: this.timings.heartbeatMs,
        onError: (error) => {
          this.engine.logger.warn(`event stream of session ${sessionId} ended: ${String(error)}`);
          subscriber.next({ type: 'error', data: { message: 'the event stream broke; reconnect with Last-Event-ID' } });
        },
      });
      this.feeds.add(feed);
      void feed.run().finally(() => {
        this.feeds.delete(feed);
        subscriber.complete();
      });
      return () => feed.stop();
    });
  }

  beforeApplicationShutdown(): void {
    this.closing = true;
    for (const feed of this.feeds) feed.stop();
  }
}
