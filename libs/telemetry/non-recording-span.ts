import type { Span, SpanContext } from '@opentelemetry/api';

/** The API's invalid span context: what a no-op tracer's spans carry. */
const INVALID_SPAN_CONTEXT: SpanContext = { traceId: '0'.repeat(32), spanId: '0'.repeat(16), traceFlags: 0 };

/** A span that records nothing, as the API's no-op tracer makes them (its `NonRecordingSpan`). */
class NonRecordingSpan implements Span {
  spanContext(): SpanContext {
    return INVALID_SPAN_CONTEXT;
  }
  setAttribute(): this {
    return this;
  }
  setAttributes(): this {
    return this;
  }
  addEvent(): this {
    return this;
  }
  addLink(): this {
    return this;
  }
  addLinks(): this {
    return this;
  }
  setStatus(): this {
    return this;
  }
  updateName(): this {
    return this;
  }
  end(): void {}
  isRecording(): boolean {
    return false;
  }
  recordException(): void {}
}
/** The one non-recording span: it holds nothing. */
export const NON_RECORDING: Span = new NonRecordingSpan();
