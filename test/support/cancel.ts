import type { EmulatorScript, RecordedRequest } from '../../libs/emulator';
import type { StoredEvent } from '../../libs/events';
import type { OpenStream, ReceivedEvent } from './sse-client';

/** An input containing this word gets the long story reply (the others a short one). */
export const SLOW_MARK = 'SLOWLY';

/** Thirty words of story, emoji (a ZWJ family, a flag, a dragon) and CJK among them: ~3 s at 100 ms a streamed word. */
export const LONG_STORY = Array.from({ length: 5 }, (_, i) => `龍の息🐉 rises over 灰の村 where the 👩‍👩‍👧 family ${i === 4 ? 'waits 🇯🇵.' : 'waits 🇯🇵,'}`).join(
  ' ',
);

export const SHORT_STORY = 'The lantern flickers.';

/**
 * The emulated model's replies for sessions that run the narrator alone: the long story when the
 * player's input (the request's last user message) has `SLOW_MARK`, the short one otherwise.
 */
export function storyScript(options: { long?: string; short?: string } = {}): EmulatorScript {
  return (call) => {
    const lastUser = [...call.transcript].reverse().find((m) => m.role === 'user')?.content ?? '';
    return { kind: 'text', text: lastUser.includes(SLOW_MARK) ? (options.long ?? LONG_STORY) : (options.short ?? SHORT_STORY) };
  };
}

export interface Answer {
  status: number;
  body: Record<string, unknown>;
  headers: Headers;
}

/** `POST /v1/executions/:id/cancel` as a client sends it (`body` undefined: no body at all). */
export async function postCancel(
  baseUrl: string,
  apiKey: string,
  executionId: string,
  options: { body?: unknown; idempotencyKey?: string } = {},
): Promise<Answer> {
  const res = await fetch(`${baseUrl}/v1/executions/${executionId}/cancel`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${apiKey}`,
      ...(options.body === undefined ? {} : { 'content-type': 'application/json' }),
      ...(options.idempotencyKey === undefined ? {} : { 'idempotency-key': options.idempotencyKey }),
    },
    ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown>, headers: res.headers };
}

/** Waits (bounded) until the emulator has recorded the first request whose body contains `text`. */
export async function requestWith(requests: readonly RecordedRequest[], text: string, boundMs = 30_000): Promise<RecordedRequest> {
  const deadline = Date.now() + boundMs;
  for (;;) {
    const found = requests.find((r) => r.raw.includes(text));
    if (found) return found;
    if (Date.now() > deadline) throw new Error(`the emulator never got a request with ${JSON.stringify(text)}`);
    await sleep(20);
  }
}

/** Waits (bounded) until the emulator saw the client close the request's connection; undefined if it never did. */
export async function clientClosed(request: RecordedRequest, boundMs = 30_000): Promise<RecordedRequest['clientClosed']> {
  const deadline = Date.now() + boundMs;
  while (!request.clientClosed && Date.now() < deadline) await sleep(20);
  return request.clientClosed;
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The deltas of an execution a stream has received so far, in order. */
export const deltasOf = (stream: OpenStream, executionId: string): ReceivedEvent[] =>
  stream.events.filter((e) => e.type === 'delta' && e.data.executionId === executionId);

/** How an execution ended in the log: its commits and its cancels (exactly one of them, once, when it ended right). */
export function endsOf(events: readonly StoredEvent[], executionId: string): { committed: number; cancelled: number } {
  const mine = events.filter((e) => (e.data as { executionId?: string }).executionId === executionId);
  return {
    committed: mine.filter((e) => e.type === 'turn.committed@1').length,
    cancelled: mine.filter((e) => e.type === 'execution.cancelled@1').length,
  };
}
