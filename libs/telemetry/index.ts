/**
 * OpenTelemetry traces of the engine (docs/operations.md, Traces). The engine records spans through
 * `@opentelemetry/api` only (`spans.ts`); the SDK is loaded and registered by `startTracing`, once
 * per process, and only when an OTLP endpoint is configured.
 */
export { ATTR, SPAN } from './attributes';
export { TraceCarrierSchema, type TraceCarrier } from './carrier';
export {
  activeTraceIds,
  annotate,
  currentTraceCarrier,
  inJobSpan,
  inRootSpan,
  inSpan,
  markFailed,
  recordError,
  SpanKind,
  startServerSpan,
  usageAttributes,
  withTraceCarrier,
  type Attributes,
  type Span,
} from './spans';
export { httpServerSpans } from './http';
export { TelemetryEnv } from './env';
export { startTracing, startTracingForTests, TracingConfigError, tracesEndpoint, type TestTracing, type Tracing, type TracingOptions } from './setup';
