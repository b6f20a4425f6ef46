import { APIError, OpenAIError } from 'openai';

/** One server-sent event as the OpenAI SDK's decoder gives it: its `event` field (null: none) and its data lines joined by `\n`. */
export interface SseMessage {
  event: string | null;
  data: string;
}

/**
 * The server-sent events of a streamed response body, decoded as the OpenAI SDK's
 * `Stream.fromSSEResponse` decodes them (`_iterSSEMessages`: lines end at `\r\n`, `\r` or `\n`; an
 * empty line ends an event that has an `event` or a `data` field; `:` starts a comment; a field's
 * value loses one leading space; an event not ended by an empty line when the body ends is
 * dropped), without its cost: the SDK copies the whole unread buffer once per event (a reply of n
 * chunks that arrives in one read is n² bytes copied) and re-decodes each event's bytes; here the
 * body is decoded once, as it comes, and cut into lines in place (issue 33: the SDK's stream
 * parsing was ~2 % of a worker's CPU per narrator turn).
 */
export async function* sseMessages(body: AsyncIterable<Uint8Array>): AsyncGenerator<SseMessage> {
  const decoder = new SseDecoder();
  for await (const chunk of body) yield* decoder.push(chunk);
  yield* decoder.end();
}

/**
 * `sseMessages`' decoder, fed one read at a time: each read's whole events at once (one async step
 * per read, not per event, for the reader that takes them).
 */
export class SseDecoder {
  private readonly decoder = new TextDecoder();
  private text = '';
  private event: string | null = null;
  private data: string[] = [];

  /** The events a read completes. */
  push(chunk: Uint8Array): SseMessage[] {
    this.text += this.decoder.decode(chunk, { stream: true });
    return this.lines(false);
  }

  /** The body ended: the events its last lines complete (one not ended by an empty line is dropped). */
  end(): SseMessage[] {
    this.text += this.decoder.decode();
    const out = this.lines(true);
    if (this.text.length > 0) this.line(this.text);
    this.text = '';
    return out;
  }

  private lines(ended: boolean): SseMessage[] {
    const out: SseMessage[] = [];
    const text = this.text;
    let start = 0;
    for (;;) {
      const end = lineEnd(text, start);
      if (end === -1) break;
      const cr = text.charCodeAt(end) === CR;
      // a `\r` last in what came so far: its `\n` may be in the next read (one line end, not two)
      if (cr && end + 1 === text.length && !ended) break;
      const message = this.line(text.slice(start, end));
      start = end + (cr && text.charCodeAt(end + 1) === LF ? 2 : 1);
      if (message) out.push(message);
    }
    if (start > 0) this.text = text.slice(start);
    return out;
  }

  /** Takes one line; the event it ends, if any. */
  private line(l: string): SseMessage | null {
    if (l === '') {
      if (this.event === null && this.data.length === 0) return null;
      const message = { event: this.event, data: this.data.join('\n') };
      this.event = null;
      this.data = [];
      return message;
    }
    if (l.startsWith(':')) return null;
    const colon = l.indexOf(':');
    const field = colon === -1 ? l : l.slice(0, colon);
    let value = colon === -1 ? '' : l.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'event') this.event = value;
    else if (field === 'data') this.data.push(value);
    return null;
  }
}

const CR = 13;
const LF = 10;

function lineEnd(text: string, from: number): number {
  for (let i = from; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === LF || c === CR) return i;
  }
  return -1;
}

/**
 * The JSON items of a streamed OpenAI response, as the SDK's `Stream` yields them: `[DONE]` ends
 * the stream (what follows is read and ignored), an item with an `error` throws the SDK's
 * `APIError`, a `thread.*` event comes as `{ event, data }`; a body aborted by the request's signal
 * ends the items without an error (as the SDK's iterator does: the caller checks its signal).
 */
export async function* openAIStreamItems<T>(response: Response): AsyncGenerator<T> {
  if (!response.body) throw new OpenAIError('Attempted to iterate over a response with no body');
  let done = false;
  const decoder = new SseDecoder();
  /** The items of one read's events, into `out` (an item that throws comes after those before it, which the caller yields first). */
  const items = (messages: readonly SseMessage[], out: T[]): void => {
    for (const sse of messages) {
      if (done) continue;
      if (sse.data.startsWith('[DONE]')) {
        done = true;
        continue;
      }
      const data = JSON.parse(sse.data) as { error?: unknown; message?: string } | null;
      if (sse.event === null || !sse.event.startsWith('thread.')) {
        if (data && data.error) throw new APIError(undefined, data.error as object, undefined, response.headers);
        out.push(data as T);
      } else {
        if (sse.event === 'error') throw new APIError(undefined, data?.error as object, data?.message, undefined);
        out.push({ event: sse.event, data } as T);
      }
    }
  };
  const read = function* (messages: readonly SseMessage[]): Generator<T> {
    const out: T[] = [];
    let failure: { error: unknown } | undefined;
    try {
      items(messages, out);
    } catch (error) {
      failure = { error };
    }
    yield* out;
    if (failure) throw failure.error;
  };
  try {
    for await (const chunk of response.body as AsyncIterable<Uint8Array>) yield* read(decoder.push(chunk));
    yield* read(decoder.end());
  } catch (error) {
    if (isAbortError(error)) return;
    throw error;
  }
}

/** The SDK's test: an `AbortError` by name (spec-compliant fetch), or Expo fetch's cancellation. */
function isAbortError(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  if ('name' in error && error.name === 'AbortError') return true;
  return 'message' in error && String(error.message).includes('FetchRequestCanceledException');
}
