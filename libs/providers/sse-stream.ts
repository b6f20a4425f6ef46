import { createParser, type EventSourceParser } from 'eventsource-parser';

/** One server-sent event: its `event` field (null: none or empty) and its data lines joined by `\n`. */
export interface SseMessage {
  event: string | null;
  data: string;
}

/**
 * The server-sent events of a streamed response body, framed by `eventsource-parser` (the WHATWG
 * rules: lines end at `\r\n`, `\r` or `\n`; an empty line ends an event that has a `data` field;
 * `:` starts a comment; a field's value loses one leading space; an event not ended by an empty
 * line when the body ends is dropped). The OpenAI SDK's `Stream.fromSSEResponse` frames the same
 * way for what OpenAI sends, but copies the whole unread buffer once per event (a reply of n chunks
 * that arrives in one read is n² bytes copied) and re-decodes each event's bytes; here each read is
 * decoded once and handed to the parser (issue 33: the SDK's stream parsing was ~2 % of a worker's
 * CPU per narrator turn). Where the two differ (edge cases OpenAI never sends, e.g. an `event:`
 * field with no `data:`, which the SDK yields with empty data and the WHATWG rules drop), the
 * differential test names each case and the outcome of both.
 */
export async function* sseMessages(body: AsyncIterable<Uint8Array>): AsyncGenerator<SseMessage> {
  const decoder = new SseDecoder();
  for await (const chunk of body) yield* decoder.push(chunk);
  yield* decoder.end();
}

const NONE: readonly SseMessage[] = Object.freeze([]);
const CR = 13;

/**
 * `sseMessages`' decoder, fed one read at a time: each read's whole events at once (one async step
 * per read, not per event, for the reader that takes them).
 */
export class SseDecoder {
  private readonly decoder = new TextDecoder();
  private readonly parser: EventSourceParser;
  private out: SseMessage[] = [];
  /** The text fed so far ends with `\r`: the parser keeps it until it knows whether a `\n` follows. */
  private endsWithCr = false;

  constructor() {
    this.parser = createParser({ onEvent: (message) => this.out.push({ event: message.event || null, data: message.data }) });
  }

  /** The events a read completes. */
  push(chunk: Uint8Array): readonly SseMessage[] {
    this.feed(this.decoder.decode(chunk, { stream: true }));
    return this.take();
  }

  /** The body ended: the events its last lines complete (one not ended by an empty line is dropped). */
  end(): readonly SseMessage[] {
    this.feed(this.decoder.decode());
    // a `\r` last in the body ends its line (as a `\r\n` would)
    if (this.endsWithCr) this.feed('\n');
    return this.take();
  }

  private feed(text: string): void {
    if (text.length === 0) return;
    this.parser.feed(text);
    this.endsWithCr = text.charCodeAt(text.length - 1) === CR;
  }

  private take(): readonly SseMessage[] {
    if (this.out.length === 0) return NONE;
    const out = this.out;
    this.out = [];
    return out;
  }
}

/**
 * The JSON items of a streamed OpenAI response, as the SDK's `Stream` yields them: `[DONE]` ends
 * the stream (what follows is read and ignored), an item with an `error` throws the SDK's
 * `APIError`, a `thread.*` event comes as `{ event, data }`; a body aborted by the request's signal
 * ends the items without an error (as the SDK's iterator does: the caller checks its signal).
 */
export async function* openAIStreamItems<T>(response: Response): AsyncGenerator<T> {
  for await (const batch of openAIStreamBatches<T>(response)) yield* batch;
}

/**
 * `openAIStreamItems` a read of the body at a time: the items of each read's events as one array
 * (never empty), in order; an item that throws comes after the batch of those before it. A reply
 * streams a chunk per word or so, and a read brings many: its reader takes them in one async step
 * instead of one per item (issue 33: an async generator's yield and the reader's `for await` are
 * some promises each, with the async hooks' work on every one, per chunk of every streamed reply).
 */
export async function* openAIStreamBatches<T>(response: Response): AsyncGenerator<readonly T[]> {
  // the SDK's errors, required at the first stream (the client that made the request loaded it)
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { APIError, OpenAIError } = require('openai') as typeof import('openai');
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
  /** One read's items, and what it threw after them. */
  const read = (messages: readonly SseMessage[]): { out: T[]; failure?: { error: unknown } } => {
    const out: T[] = [];
    try {
      items(messages, out);
      return { out };
    } catch (error) {
      return { out, failure: { error } };
    }
  };
  try {
    for await (const chunk of response.body as AsyncIterable<Uint8Array>) {
      const { out, failure } = read(decoder.push(chunk));
      if (out.length > 0) yield out;
      if (failure) throw failure.error;
    }
    const { out, failure } = read(decoder.end());
    if (out.length > 0) yield out;
    if (failure) throw failure.error;
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
