import { BeforeApplicationShutdown, Inject, Injectable, type MessageEvent } from '@nestjs/common';
import { Observable } from 'rxjs';
import { type Engine, generationEnded, type WorldGenerationView } from '../../../libs/engine';
import { SESSION_EVENTS_TIMINGS, type SessionEventsTimings } from '../session-events/session-events.service';
import { ENGINE } from '../tokens';

/**
 * The open progress streams of world generation jobs in this API process (`GET
 * /v1/worlds/generate/:jobId/events`): each reads the job's progress from the database (any API
 * process serves any stream) at the session streams' poll interval, sends a `progress` event each
 * time it changes — the first at once — and ends after `done` or `failed`. Comment lines are
 * heartbeats. On shutdown every stream is completed before the HTTP server closes.
 */
@Injectable()
export class WorldGenerationEvents implements BeforeApplicationShutdown {
  private readonly stops = new Set<() => void>();
  private closing = false;

  constructor(
    @Inject(ENGINE) private readonly engine: Engine,
    @Inject(SESSION_EVENTS_TIMINGS) private readonly timings: SessionEventsTimings,
  ) {}

  stream(tenantId: string, jobId: string): Observable<MessageEvent> {
    return new Observable<MessageEvent>((subscriber) => {
      if (this.closing) {
        subscriber.complete();
        return undefined;
      }
      let stopped = false;
      let wake: (() => void) | null = null;
      const stop = () => {
        stopped = true;
        wake?.();
      };
      this.stops.add(stop);
      const heartbeat = setInterval(() => subscriber.next({ comment: 'heartbeat' }), this.timings.heartbeatMs);
      heartbeat.unref();
      void (async () => {
        let last = '';
        try {
          while (!stopped) {
            const view: WorldGenerationView = await this.engine.worldGeneration.view(tenantId, jobId);
            const key = `${view.status}/${view.round}/${view.updatedAt}`;
            if (key !== last) {
              last = key;
              subscriber.next({ type: 'progress', id: key, data: view });
            }
            if (generationEnded(view)) break;
            await new Promise<void>((resolve) => {
              const timer = setTimeout(resolve, this.timings.pollIntervalMs);
              wake = () => {
                clearTimeout(timer);
                resolve();
              };
            });
          }
        } catch (error) {
          this.engine.logger.warn(`progress stream of world generation ${jobId} ended: ${String(error)}`);
          subscriber.next({ type: 'error', data: { message: 'the progress stream broke; reconnect' } });
        } finally {
          clearInterval(heartbeat);
          this.stops.delete(stop);
          subscriber.complete();
        }
      })();
      return stop;
    });
  }

  beforeApplicationShutdown(): void {
    this.closing = true;
    for (const stop of this.stops) stop();
  }
}
