// Following a session's events (GET /v1/sessions/:id/events), as any client of the API can: fetch
// with the key, the SSE framing read by ./sse.js, a reconnection after a lost stream that resumes
// with Last-Event-ID (so no event is missed or seen twice).
import { authHeaders } from './http.js';
import { sseParser } from './sse.js';

/**
 * Follows the session until `signal` aborts: `onEvent({ id, type, data })` for each event (`data`
 * parsed), `onState({ connected, reason?, fatal? })` as the stream comes and goes. A 4xx ends it for
 * good (`fatal`: a session that is not the tenant's, a key refused); anything else reconnects after
 * 0.5 s, doubling up to 10 s.
 */
export async function followSession({ sessionId, onEvent, onState, signal }) {
  let lastEventId = null;
  let delay = 500;
  while (!signal.aborted) {
    try {
      const res = await fetch(`/v1/sessions/${sessionId}/events`, {
        headers: { ...authHeaders(), Accept: 'text/event-stream', ...(lastEventId ? { 'Last-Event-ID': lastEventId } : {}) },
        signal,
      });
      if (!res.ok || !res.body) {
        const body = await res.json().catch(() => null);
        const fatal = res.status >= 400 && res.status < 500;
        onState({ connected: false, reason: `${res.status} ${body?.message ?? res.statusText}`.trim(), fatal });
        if (fatal) return;
      } else {
        onState({ connected: true });
        delay = 500;
        const feed = sseParser((message) => {
          if (message.id) lastEventId = message.id;
          let data;
          try {
            data = JSON.parse(message.data);
          } catch {
            data = { text: message.data };
          }
          onEvent({ id: message.id, type: message.type, data });
        });
        const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          feed(value);
        }
        onState({ connected: false, reason: 'the server ended the stream', fatal: false });
      }
    } catch (error) {
      if (signal.aborted) return;
      onState({ connected: false, reason: error?.message ?? String(error), fatal: false });
    }
    await new Promise((resolve) => {
      const timer = setTimeout(resolve, delay);
      signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
    });
    delay = Math.min(delay * 2, 10_000);
  }
}
