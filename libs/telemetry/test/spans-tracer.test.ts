import { INVALID_SPAN_CONTEXT, trace } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { currentTraceCarrier, inJobSpan, inRootSpan, inSpan, startServerSpan } from '..';

/** A provider whose spans are kept in memory. */
function recordingProvider() {
  const exporter = new InMemorySpanExporter();
  return { exporter, provider: new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }) };
}

describe("the engine's spans with nothing registered with @opentelemetry/api (not even loaded by the engine)", () => {
  it("are non-recording spans with the API's invalid context, as its no-op tracer makes them; a throw is thrown on", async () => {
    // the first test of the file: nothing has registered with the API yet (no global of it)
    expect(Symbol.for('opentelemetry.js.api.1') in globalThis).toBe(false);
    const contexts = [
      await inSpan('a', {}, async (span) => [span.isRecording(), span.spanContext()]),
      await inJobSpan('b', { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' }, {}, async (span) => [
        span.isRecording(),
        span.spanContext(),
      ]),
      await inRootSpan('c', {}, async (span) => [span.isRecording(), span.spanContext()]),
    ];
    expect(contexts).toEqual(Array(3).fill([false, INVALID_SPAN_CONTEXT]));
    await expect(inSpan('d', {}, () => Promise.reject(new Error('thrown on')))).rejects.toThrow('thrown on');
    await expect(
      inSpan('e', {}, () => {
        throw new Error('thrown synchronously');
      }),
    ).rejects.toThrow('thrown synchronously');
    expect(await inSpan('f', {}, async () => currentTraceCarrier())).toBeUndefined();
    const server = startServerSpan('GET', { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' }, {});
    expect([server.span.isRecording(), server.run(() => 'ran')]).toEqual([false, 'ran']);
  });
});

describe("the engine's spans and the global tracer provider", () => {
  afterEach(() => trace.disable());

  it('the tracer kept between spans follows a provider registered after the first span, and one registered after a disable', async () => {
    // no provider yet: a span records nothing
    await inSpan('before', {}, async (span) => expect(span.isRecording()).toBe(false));
    const first = recordingProvider();
    expect(trace.setGlobalTracerProvider(first.provider)).toBe(true);
    await inSpan('first', {}, async (span) => expect(span.isRecording()).toBe(true));
    expect(first.exporter.getFinishedSpans().map((s) => s.name)).toEqual(['first']);

    // disabled: nothing records; another provider: its exporter gets the next spans, the first none
    trace.disable();
    await inSpan('off', {}, async (span) => expect(span.isRecording()).toBe(false));
    const second = recordingProvider();
    expect(trace.setGlobalTracerProvider(second.provider)).toBe(true);
    await inSpan('second', {}, async () => undefined);
    expect(second.exporter.getFinishedSpans().map((s) => s.name)).toEqual(['second']);
    expect(first.exporter.getFinishedSpans().map((s) => s.name)).toEqual(['first']);
  });
});
