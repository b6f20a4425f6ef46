import { BeforeApplicationShutdown, Inject, Injectable, type MessageEvent } from '@nestjs/common';
import { EMPTY, Observable, type Subscriber } from 'rxjs';
import type { Engine } from '../../../libs/engine';
import { ENGINE } from '../tokens';
import type { ResumePoint } from './event-id';
import { SessionFeed } from './session-feed';
import { StreamCounts, type StreamLimits } from './stream-counts';

/** Timings of the session event streams (tests shorten them). */
export interface SessionEventsTimings {
  /** How often a world generation's progress stream reads the job. */
  pollIntervalMs: number;
  heartbeatMs: number;
  /** A session stream's safety net: read even unwoken this often (appends wake it at once). Default 30 s. */
  safetyPollMs?: number;
}

export const SESSION_EVENTS_TIMINGS = Symbol('SESSION_EVENTS_TIMINGS');
export const DEFAULT_SESSION_EVENTS_TIMINGS: SessionEventsTimings = { pollIntervalMs: 500, heartbeatMs: 15_000, safetyPollMs: 30_000 };

/** Who opens a stream, and where it starts. */
export interface StreamRequest {
  tenantId: string;
  keyId: string;
  sessionId: string;
  /** `Last-Event-ID`, read; it wins over `startAfter`. */
  resume: ResumePoint | null;
  /** Without `resume`: the log events after this global position are sent. */
  startAfter: number;
  /** Aborted when the client leaves or the stream ends (Nest's `@SseSignal()`). */
  signal: AbortSignal;
}

/**
 * The open event streams of this API process: each one a `SessionFeed` following the session's
 * log in the database (not this process's memory: any API process serves any stream), woken by
 * the engine's `appends` (one LISTEN for all of them). Counted per tenant and per API key: past
 * `config.streams` a new one is refused (429 `TOO_MANY_STREAMS`) before anything is sent. A stream
 * whose API key is revoked ends at its next heartbeat (plus the key cache's time). A stream
 * that ends (the client left, shutdown, a failure) leaves nothing behind: its feed is dropped from
 * the registry, its subscriptions and timers released, its count given back. On shutdown
 * (`app.close()`, on SIGTERM through `closeOnSignals`) every stream is completed before the
 * HTTP server closes, so clients see a clean end and reconnect elsewhere with `Last-Event-ID`.
 */
@Injectable()
export class SessionEvents implements BeforeApplicationShutdown {
  private readonly feeds = new Set<SessionFeed>();
  private readonly counts: StreamCounts;
  private closing = false;

  constructor(
    @Inject(ENGINE) private readonly engine: Engine,
    @Inject(SESSION_EVENTS_TIMINGS) private readonly timings: SessionEventsTimings,
  ) {
    const limits: StreamLimits = engine.config.streams;
    this.counts = new StreamCounts(limits);
  }

  /** Streams open in this process (the registry), and the tenants and keys counted: for leak checks and metrics. */
  get open(): { feeds: number; tenants: number; keys: number } {
    return { feeds: this.feeds.size, ...this.counts.size };
  }

  /**
   * A stream, opened once its feed hears the session (`SessionFeed.ready`: subscribed to its deltas
   * and appends): Nest sends the headers when the returned stream is subscribed, so from the moment
   * the client sees it open every delta published for the session reaches it. What the feed sends
   * before Nest subscribes waits.
   */
  async stream(request: StreamRequest): Promise<Observable<MessageEvent>> {
    const { sessionId, signal } = request;
    if (this.closing || signal.aborted) return EMPTY;
    const lease = this.counts.take(request.tenantId, request.keyId);
    if (lease instanceof Error) throw lease; // before any byte: the error filter answers 429
    let subscriber: Subscriber<MessageEvent> | null = null;
    const early: MessageEvent[] = [];
    let ended = false;
    const send = (message: MessageEvent) => (subscriber ? subscriber.next(message) : early.push(message));
    const feed = new SessionFeed({
      store: this.engine.store,
      deltas: this.engine.deltas,
      appends: this.engine.appends,
      sessionId,
      resume: request.resume,
      startAfter: request.startAfter,
      send,
      pollIntervalMs: this.timings.safetyPollMs ?? DEFAULT_SESSION_EVENTS_TIMINGS.safetyPollMs!,
      heartbeatMs: this.timings.heartbeatMs,
      // a revoked key keeps no stream: checked at each heartbeat (through the key cache, cacheMs)
      stillAllowed: () => this.engine.tenants.keyActive(request.keyId),
      onError: (error) => {
        this.engine.logger.warn(`event stream of session ${sessionId} ended: ${String(error)}`);
        send({ type: 'error', data: { message: 'the event stream broke; reconnect with Last-Event-ID' } });
      },
    });
    this.feeds.add(feed);
    // the client left (during set-up too: the stream is then never subscribed) or the stream ended
    signal.addEventListener('abort', () => feed.stop(), { once: true });
    void feed.run().finally(() => {
      this.feeds.delete(feed);
      lease();
      ended = true;
      subscriber?.complete();
    });
    await feed.ready;
    return new Observable<MessageEvent>((opened) => {
      subscriber = opened;
      for (const message of early.splice(0)) opened.next(message);
      if (ended) opened.complete();
      return () => feed.stop();
    });
  }

  beforeApplicationShutdown(): void {
    this.closing = true;
    for (const feed of this.feeds) feed.stop();
  }
}
