import { trace } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { inSpan } from '..';

/** A provider whose spans are kept in memory. */
function recordingProvider() {
  const exporter = new InMemorySpanExporter();
  return { exporter, provider: new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }) };
}

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
