import { createParser } from 'eventsource-parser';
import type { PlayClient } from '../../apps/play/play-client';

export interface ReceivedEvent {
  id: string | undefined;
  type: string;
  data: Record<string, unknown>;
}

export interface OpenStream {
  status: number;
  events: ReceivedEvent[];
  /** Comment lines (heartbeats) seen. */
  comments: number;
  /** Resolves with the first event (in order) after those already matched that satisfies `test`. */
  until(test: (event: ReceivedEvent) => boolean): Promise<ReceivedEvent>;
  /** The stream has ended (the server closed it). */
  ended: Promise<void>;
  close(): void;
}

/** One connection to `GET /v1/sessions/:id/events` (no reconnection: the test decides). */
export function openEventStream(client: PlayClient, sessionId: string, lastEventId?: string, baseUrl = client.baseUrl): Promise<OpenStream> {
  return openStreamAt(client, `/v1/sessions/${sessionId}/events`, lastEventId, baseUrl);
}

/** One connection to an event stream of the API at `path` (`/v1/worlds/generate/:jobId/events`, ...). */
export async function openStreamAt(client: PlayClient, path: string, lastEventId?: string, baseUrl = client.baseUrl): Promise<OpenStream> {
  const abort = new AbortController();
  const res = await fetch(`${baseUrl}${path}`, {
    headers: { ...client.authHeaders(), accept: 'text/event-stream', ...(lastEventId ? { 'last-event-id': lastEventId } : {}) },
    signal: abort.signal,
  });
  const events: ReceivedEvent[] = [];
  const waiters: { test: (e: ReceivedEvent) => boolean; resolve: (e: ReceivedEvent) => void; from: number }[] = [];
  const stream: OpenStream = {
    status: res.status,
    events,
    comments: 0,
    until(test) {
      const found = events.find(test);
      if (found) return Promise.resolve(found);
      return new Promise((resolve) => waiters.push({ test, resolve, from: events.length }));
    },
    ended: Promise.resolve(),
    close: () => abort.abort(),
  };
  if (res.status !== 200 || !res.body) return stream;
  const parser = createParser({
    onEvent(message) {
      const event = { id: message.id, type: message.event ?? 'message', data: JSON.parse(message.data) as Record<string, unknown> };
      events.push(event);
      for (const waiter of [...waiters]) {
        if (waiter.test(event)) {
          waiters.splice(waiters.indexOf(waiter), 1);
          waiter.resolve(event);
        }
      }
    },
    onComment() {
      stream.comments++;
    },
  });
  const body = res.body;
  stream.ended = (async () => {
    const decoder = new TextDecoder();
    try {
      for await (const chunk of body) parser.feed(decoder.decode(chunk as Uint8Array, { stream: true }));
    } catch {
      // closed by the test
    }
  })();
  return stream;
}
