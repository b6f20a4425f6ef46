import { isDeepStrictEqual } from 'node:util';
import { APIError } from 'openai';
import { Stream } from 'openai/core/streaming';
import { openAIStreamBatches, openAIStreamItems } from '../sse-stream';

/**
 * The OpenAI Chat adapter reads a streamed reply's events itself (`openAIStreamItems`, framed by
 * `eventsource-parser`) instead of through the SDK's `Stream` (issue 33: CPU per turn). It must
 * yield exactly what the SDK's would, however the body is cut into reads: both are run on the same
 * bytes, cut at every position (`BODIES`). `eventsource-parser` follows the WHATWG rules, the SDK's
 * reader its own; they differ on a few bodies OpenAI never sends, each named in `DIFFERENCES` with
 * the outcome of both (a random search over bodies made of fields, comments, spaces and every line
 * end, cut anywhere, found no other difference).
 */
const encoder = new TextEncoder();

function response(chunks: readonly Uint8Array[]): Response {
  return new Response(
    new ReadableStream<Uint8Array>({
      start(controller) {
        for (const c of chunks) controller.enqueue(c);
        controller.close();
      },
    }),
  );
}

interface Outcome {
  items: unknown[];
  error?: string;
}

async function outcome(items: AsyncIterable<unknown>): Promise<Outcome> {
  const seen: unknown[] = [];
  try {
    for await (const item of items) seen.push(item);
    return { items: seen };
  } catch (error) {
    return { items: seen, error: `${error instanceof APIError ? 'APIError' : (error as Error).name}: ${(error as Error).message}` };
  }
}

const sdk = (chunks: readonly Uint8Array[]) => outcome(Stream.fromSSEResponse(response(chunks), new AbortController()));
const ours = (chunks: readonly Uint8Array[]) => outcome(openAIStreamItems(response(chunks)));

/** The body whole, in one-byte reads, and cut in two at every position. */
function cuts(bytes: Uint8Array): Uint8Array[][] {
  const all: Uint8Array[][] = [[bytes], Array.from(bytes, (b) => Uint8Array.of(b))];
  for (let i = 1; i < bytes.length; i++) all.push([bytes.slice(0, i), bytes.slice(i)]);
  return all;
}

/**
 * The cuts whose outcome is not `expected`, with the read sizes and what came instead: asserted
 * once per body as `[]` (an `expect` per cut, ~6,000 of them, was most of this file's CPU).
 * `isDeepStrictEqual` is stricter than `toEqual`, never looser.
 */
async function mismatches(cutsOf: Uint8Array[][], expected: unknown, run: (chunks: Uint8Array[]) => Promise<unknown>) {
  const found: { reads: number[]; got: unknown }[] = [];
  for (const chunks of cutsOf) {
    const got = await run(chunks);
    if (!isDeepStrictEqual(got, expected)) found.push({ reads: chunks.map((c) => c.length), got });
  }
  return found;
}

const chunk = (content: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content } }], ...extra });

const BODIES: Record<string, string> = {
  'a chat stream (LF)': `data: ${chunk('Hel')}\n\ndata: ${chunk('lo')}\n\ndata: ${chunk('', { usage: { prompt_tokens: 3 } })}\n\ndata: [DONE]\n\n`,
  'CRLF line ends': `data: ${chunk('a')}\r\n\r\ndata: ${chunk('b')}\r\n\r\ndata: [DONE]\r\n\r\n`,
  'CR line ends': `data: ${chunk('a')}\r\rdata: ${chunk('b')}\r\r`,
  'comments, ids, retry and fields without a space': `: keep-alive\n\nid: 7\nretry: 100\ndata:${chunk('x')}\n\n:\n\ndata: ${chunk('y')}\n\n`,
  'data over several lines, an event name': `event: message\ndata: {"choices":\ndata: [{"delta":{"content":"z"}}]}\n\n`,
  'an empty event field': `event:\ndata: ${chunk('a')}\n\nevent: \ndata: ${chunk('b')}\n\n`,
  'a thread event': `event: thread.run.created\ndata: {"id":"run_1"}\n\ndata: ${chunk('after')}\n\n`,
  'unicode split across reads': `data: ${chunk('é🙂 naïve — 東京')}\n\ndata: ${chunk('😀')}\n\n`,
  'events after [DONE] are ignored': `data: ${chunk('a')}\n\ndata: [DONE]\n\ndata: ${chunk('late')}\n\n`,
  'a last event without its empty line is dropped': `data: ${chunk('a')}\n\ndata: ${chunk('cut')}\n`,
  'a last event without a line end is dropped': `data: ${chunk('a')}\n\ndata: ${chunk('cut')}`,
  'empty lines with no event between': `\n\n\r\n\ndata: ${chunk('a')}\n\n\n\n`,
  'an error item': `data: ${chunk('a')}\n\ndata: {"error":{"message":"overloaded","type":"server_error"}}\n\ndata: ${chunk('b')}\n\n`,
  'an error event of a thread': `data: ${chunk('a')}\n\nevent: error\ndata: {"error":"bad","message":"went wrong"}\n\n`,
  'JSON that does not parse': `data: ${chunk('a')}\n\ndata: {not json\n\n`,
  'a data field with no value': `data\n\n`,
};

/** Where the SDK's reader and the WHATWG rules differ: the body, and what each yields (for any cut). */
const DIFFERENCES: Record<string, { body: string; sdk: Outcome; ours: Outcome }> = {
  // WHATWG: an event is dispatched only if it has data. The SDK yields it with empty data, which
  // does not parse as JSON.
  'an event field with no data': {
    body: `data: ${chunk('a')}\n\nevent: ping\n\ndata: ${chunk('b')}\n\n`,
    sdk: { items: [JSON.parse(chunk('a'))], error: 'SyntaxError: Unexpected end of JSON input' },
    ours: { items: [JSON.parse(chunk('a')), JSON.parse(chunk('b'))] },
  },
  // WHATWG: a byte order mark is dropped at the start of the stream only. The SDK decodes each line
  // alone, and the decoder drops a leading one from every line.
  'a line that starts with a byte order mark, after the first': {
    body: `data: ${chunk('a')}\n\n\uFEFFdata: ${chunk('b')}\n\n`,
    sdk: { items: [JSON.parse(chunk('a')), JSON.parse(chunk('b'))] },
    ours: { items: [JSON.parse(chunk('a'))] },
  },
};

describe('openAIStreamItems yields what the SDK Stream yields', () => {
  // the SDK prints a body that is not JSON before it throws (the adapter's reader only throws)
  beforeAll(() => jest.spyOn(console, 'error').mockImplementation(() => undefined));
  afterAll(() => jest.restoreAllMocks());

  it.each(Object.entries(BODIES))('%s, cut anywhere', async (_name, text) => {
    const expected = await sdk([encoder.encode(text)]);
    const all = cuts(encoder.encode(text));
    expect(await mismatches(all, expected, ours)).toEqual([]);
    expect(await mismatches(all, expected, sdk)).toEqual([]);
  });

  it.each(Object.entries(DIFFERENCES))('%s: the SDK and the WHATWG rules differ, as stated', async (_name, { body, sdk: sdkOutcome, ours: oursOutcome }) => {
    const all = cuts(encoder.encode(body));
    expect(await mismatches(all, sdkOutcome, sdk)).toEqual([]);
    expect(await mismatches(all, oursOutcome, ours)).toEqual([]);
  });

  it('the cases above do yield items and errors (the comparison is not empty)', async () => {
    expect((await ours([encoder.encode(BODIES['a chat stream (LF)'])])).items).toHaveLength(3);
    expect((await ours([encoder.encode(BODIES['an error item'])])).error).toMatch(/^APIError: .*overloaded/);
    expect((await ours([encoder.encode(BODIES['JSON that does not parse'])])).error).toMatch(/^SyntaxError/);
  });

  it('a body aborted mid-stream ends the items without an error, as the SDK does', async () => {
    const aborted = () => {
      let pulls = 0;
      return new Response(
        new ReadableStream<Uint8Array>({
          pull(controller) {
            if (pulls++ === 0) controller.enqueue(encoder.encode(`data: ${chunk('a')}\n\n`));
            else controller.error(new DOMException('This operation was aborted', 'AbortError'));
          },
        }),
      );
    };
    const expected = await outcome(Stream.fromSSEResponse(aborted(), new AbortController()));
    expect(expected.error).toBeUndefined();
    expect(await outcome(openAIStreamItems(aborted()))).toEqual(expected);
  });

  it('any other failure of the body is thrown, as the SDK does', async () => {
    const broken = () =>
      new Response(
        new ReadableStream<Uint8Array>({
          pull(controller) {
            controller.error(new TypeError('terminated'));
          },
        }),
      );
    const expected = await outcome(Stream.fromSSEResponse(broken(), new AbortController()));
    expect(expected.error).toBe('TypeError: terminated');
    expect(await outcome(openAIStreamItems(broken()))).toEqual(expected);
  });
});

describe('openAIStreamBatches: the same items, a read at a time', () => {
  /** The batches (as arrays of items) and the error after them. */
  async function batches(chunks: readonly Uint8Array[]): Promise<{ batches: unknown[][]; error?: string }> {
    const seen: unknown[][] = [];
    try {
      for await (const batch of openAIStreamBatches(response(chunks))) seen.push([...batch]);
      return { batches: seen };
    } catch (error) {
      return { batches: seen, error: `${error instanceof APIError ? 'APIError' : (error as Error).name}: ${(error as Error).message}` };
    }
  }

  it('every body, cut anywhere: the batches in order are the items, none empty, the error after them', async () => {
    const found: { body: string; reads: number[]; batches: unknown[][]; error?: string; items: Outcome }[] = [];
    for (const [body, text] of Object.entries(BODIES)) {
      for (const chunks of cuts(encoder.encode(text))) {
        const { batches: got, error } = await batches(chunks);
        const items = await ours(chunks);
        const same = got.every((b) => b.length > 0) && isDeepStrictEqual({ items: got.flat(), ...(error === undefined ? {} : { error }) }, items);
        if (!same) found.push({ body, reads: chunks.map((c) => c.length), batches: got, error, items });
      }
    }
    // one assertion for all cuts (an expect per cut was most of this file's CPU)
    expect(found).toEqual([]);
  });

  it("a read's events come as one batch (one async step for the reader); an item that throws comes after the batch before it", async () => {
    const chat = encoder.encode(BODIES['a chat stream (LF)']);
    expect((await batches([chat])).batches.map((b) => b.length)).toEqual([3]);
    const half = BODIES['a chat stream (LF)'].indexOf('data: [DONE]');
    expect((await batches([chat.slice(0, half), chat.slice(half)])).batches.map((b) => b.length)).toEqual([3]);
    const failing = await batches([encoder.encode(BODIES['an error item'])]);
    expect(failing.batches).toEqual([[JSON.parse(chunk('a'))]]);
    expect(failing.error).toMatch(/^APIError: .*overloaded/);
  });
});
