import { createParser, type EventSourceMessage } from 'eventsource-parser';
import type { PlayClient } from './play-client';

/** One event of `GET /v1/sessions/:id/events`, its data parsed. */
export interface SessionStreamEvent {
  id: string | undefined;
  type: string;
  data: Record<string, unknown>;
}

export interface FollowOptions {
  onEvent: (event: SessionStreamEvent) => void;
  /** The stream is (re)connected, or lost (with why); it reconnects by itself until `signal` aborts. */
  onConnection?: (state: { connected: true } | { connected: false; reason: string; fatal: boolean }) => void;
  signal: AbortSignal;
  /** Resume after this id (default: from the session's beginning). */
  lastEventId?: string;
  /** Wait before reconnecting (doubles up to 10 s). */
  retryMs?: number;
}

/**
 * Follows a session's event stream (SSE framing read by `eventsource-parser`, the parser of the
 * `eventsource` package), reconnecting with `Last-Event-ID` after a lost connection, so no event is
 * missed or seen twice. Ends when `signal` aborts, or for good on a 4xx (a session that is not
 * found, a key that is refused): then `onConnection` says why with `fatal: true`.
 */
export async function followSession(client: PlayClient, sessionId: string, options: FollowOptions): Promise<void> {
  let lastEventId = options.lastEventId;
  let delay = options.retryMs ?? 500;
  while (!options.signal.aborted) {
    try {
      const res = await fetch(`${client.baseUrl}/v1/sessions/${sessionId}/events`, {
        headers: { ...client.authHeaders(), accept: 'text/event-stream', ...(lastEventId ? { 'last-event-id': lastEventId } : {}) },
        signal: options.signal,
      });
      if (!res.ok || !res.body) {
        const body = (await res.json().catch(() => ({}))) as { message?: string };
        const reason = `${res.status} ${body.message ?? res.statusText}`.trim();
        const fatal = res.status >= 400 && res.status < 500;
        options.onConnection?.({ connected: false, reason, fatal });
        if (fatal) return;
      } else {
        options.onConnection?.({ connected: true });
        delay = options.retryMs ?? 500;
        const parser = createParser({
          onEvent: (message: EventSourceMessage) => {
            if (message.id) lastEventId = message.id;
            options.onEvent({ id: message.id, type: message.event ?? 'message', data: parseData(message.data) });
          },
        });
        const decoder = new TextDecoder();
        for await (const chunk of res.body) parser.feed(decoder.decode(chunk as Uint8Array, { stream: true }));
        options.onConnection?.({ connected: false, reason: 'the server ended the stream', fatal: false });
      }
    } catch (error) {
      if (options.signal.aborted) return;
      options.onConnection?.({ connected: false, reason: error instanceof Error ? error.message : String(error), fatal: false });
    }
    await sleep(delay, options.signal);
    delay = Math.min(delay * 2, 10_000);
  }
}

function parseData(data: string): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(data);
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : { value: parsed };
  } catch {
    return { text: data };
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
  });
}
