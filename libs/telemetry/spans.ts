import type { Attributes, Span, SpanKind as ApiSpanKind, SpanStatusCode, Tracer, TracerProvider } from '@opentelemetry/api';
import { EngineError } from '../errors';
import type { TraceCarrier } from './carrier';
import { NON_RECORDING } from './non-recording-span';
import { type OtelApi, registeredOtelApi } from './otel-api';

/**
 * The engine's spans, on `@opentelemetry/api` only. With no SDK registered (no OTLP endpoint, see
 * `startTracing`) the API answers with its no-op tracer: spans are not recorded, nothing is injected
 * into job data, and the cost is a few function calls per span. With nothing registered with the
 * API at all, the API is not even loaded (`registeredOtelApi`): `work` gets a non-recording span
 * as the no-op tracer's, and there is no active span nor context to carry, as with the API's answers.
 */
function tracer(api: OtelApi): Tracer {
  // asked per span (several a turn): the tracer is kept while the global provider is the same one
  // (`trace.getTracer` looks the provider up and makes a tracer each time; a provider set or
  // disabled later, as tests and `startTracing` do, is met by the check)
  const provider = api.trace.getTracerProvider();
  if (kept?.provider !== provider) kept = { provider, tracer: provider.getTracer(TRACER_NAME) };
  return kept.tracer;
}
const TRACER_NAME = 'covel-engine';
let kept: { provider: TracerProvider; tracer: Tracer } | undefined;

/** `@opentelemetry/api`'s `SpanKind` values, without loading the API. */
export const SpanKind = { INTERNAL: 0, SERVER: 1, CLIENT: 2, PRODUCER: 3, CONSUMER: 4 } as const satisfies {
  [K in keyof typeof ApiSpanKind]: (typeof ApiSpanKind)[K];
};
export type SpanKind = (typeof SpanKind)[keyof typeof SpanKind];
export type { Attributes, Span };

/** `SpanStatusCode.ERROR` of the API. */
const STATUS_ERROR: SpanStatusCode.ERROR = 2;

let errorText = false;

/**
 * Whether a failed span carries the error's message and stack (set by `startTracing` from
 * COVEL_LOG_PLAYER_TEXT, off by default): a message can quote the player, the model or a key, and
 * spans leave the process. Off, a span carries the error's name, and an engine error's code and category.
 */
export function setErrorTextInSpans(on: boolean): void {
  errorText = on;
}

function errorSummary(error: unknown): { name: string; message: string } {
  if (error instanceof EngineError) return { name: error.name, message: `${error.code} (${error.category})` };
  if (error instanceof Error) return { name: error.name, message: error.name };
  return { name: 'Error', message: typeof error };
}

/** Marks the span failed: status ERROR and an `exception` event (the message only with `setErrorTextInSpans(true)`). */
export function recordError(span: Span, error: unknown): void {
  if (!span.isRecording()) return;
  if (errorText) {
    span.recordException(error instanceof Error ? error : String(error));
    span.setStatus({ code: STATUS_ERROR, message: error instanceof Error ? error.message : String(error) });
    return;
  }
  const summary = errorSummary(error);
  span.recordException(summary);
  span.setStatus({ code: STATUS_ERROR, message: summary.message });
}

/** Status ERROR without an exception (an outcome that is a failure, not a throw). */
export function markFailed(span: Span, message: string): void {
  if (span.isRecording()) span.setStatus({ code: STATUS_ERROR, message });
}

interface SpanOptions {
  attributes?: Attributes;
  kind?: SpanKind;
}

async function runIn<T>(span: Span, work: (span: Span) => Promise<T>): Promise<T> {
  try {
    return await work(span);
  } catch (error) {
    recordError(span, error);
    throw error;
  } finally {
    span.end();
  }
}

/** Runs `work` in a new span, a child of the active one; a throw marks it ERROR (and is thrown on). */
export function inSpan<T>(name: string, options: SpanOptions, work: (span: Span) => Promise<T>): Promise<T> {
  const api = registeredOtelApi();
  if (!api) return runIn(NON_RECORDING, work);
  return tracer(api).startActiveSpan(name, { kind: options.kind ?? SpanKind.INTERNAL, attributes: options.attributes ?? {} }, (span) => runIn(span, work));
}

/**
 * Runs a queue job in its span: a child of the context the job carries (the span that enqueued it),
 * never of whatever is active in this process (the in-process queue runs a job from the call stack
 * of another); a job without one starts its own trace.
 */
export function inJobSpan<T>(name: string, carrier: TraceCarrier | undefined, attributes: Attributes, work: (span: Span) => Promise<T>): Promise<T> {
  const api = registeredOtelApi();
  if (!api) return runIn(NON_RECORDING, work);
  const parent = carrier ? api.propagation.extract(api.ROOT_CONTEXT, carrier) : api.ROOT_CONTEXT;
  return tracer(api).startActiveSpan(name, { kind: SpanKind.CONSUMER, attributes }, parent, (span) => runIn(span, work));
}

/**
 * The active span's ids for a log line (`traceId`, `spanId`), so a line can be found from its trace and
 * back; nothing when no span records (tracing off: the no-op tracer's spans carry no valid context).
 */
export function activeTraceIds(): { traceId?: string; spanId?: string } {
  const api = registeredOtelApi();
  const ctx = api?.trace.getActiveSpan()?.spanContext();
  return api && ctx && api.isSpanContextValid(ctx) ? { traceId: ctx.traceId, spanId: ctx.spanId } : {};
}

/** Sets attributes on the active span (when one is recording). */
export function annotate(attributes: Attributes): void {
  const span = registeredOtelApi()?.trace.getActiveSpan();
  if (span?.isRecording()) span.setAttributes(attributes);
}

/** The active trace context as job data, or undefined (no SDK, or no span active). */
export function currentTraceCarrier(): TraceCarrier | undefined {
  const api = registeredOtelApi();
  if (!api) return undefined;
  const carrier: Record<string, string> = {};
  api.propagation.inject(api.context.active(), carrier);
  if (!carrier.traceparent) return undefined;
  return { traceparent: carrier.traceparent, ...(carrier.tracestate ? { tracestate: carrier.tracestate } : {}) };
}

/** The job with the active trace context added, unless it carries one already (or there is none). */
export function withTraceCarrier<T extends object>(job: T & { trace?: TraceCarrier }): T & { trace?: TraceCarrier } {
  if (job.trace) return job;
  const carrier = currentTraceCarrier();
  return carrier ? { ...job, trace: carrier } : job;
}

/**
 * Runs `work` in a new root span (a trace of its own, whatever is active): the turn an engine enqueues by
 * itself (a hand-off to a session's next input, the sweeper's re-enqueue) starts its trace here, and
 * every run of its job is a child of this span through the job data.
 */
export function inRootSpan<T>(name: string, attributes: Attributes, work: (span: Span) => Promise<T>): Promise<T> {
  const api = registeredOtelApi();
  if (!api) return runIn(NON_RECORDING, work);
  return tracer(api).startActiveSpan(name, { kind: SpanKind.PRODUCER, attributes, root: true }, (span) => runIn(span, work));
}

/** The span starts a new trace here, or continues one from the request's `traceparent` header. */
export function startServerSpan(
  name: string,
  headers: Record<string, string | string[] | undefined>,
  attributes: Attributes,
): { span: Span; run<T>(work: () => T): T } {
  const api = registeredOtelApi();
  if (!api) return { span: NON_RECORDING, run: (work) => work() };
  const parent = api.propagation.extract(api.ROOT_CONTEXT, headers);
  const span = tracer(api).startSpan(name, { kind: SpanKind.SERVER, attributes }, parent);
  const active = api.trace.setSpan(parent, span);
  return { span, run: (work) => api.context.with(active, work) };
}

/** Token counts of a model reply (the providers' `Usage`) as span attributes. */
export function usageAttributes(usage: {
  inputTokens: number;
  outputTokens: number;
  cachedInputTokens: number;
  cacheCreationInputTokens?: number;
}): Attributes {
  return {
    'gen_ai.usage.input_tokens': usage.inputTokens,
    'gen_ai.usage.output_tokens': usage.outputTokens,
    'covel.usage.cached_input_tokens': usage.cachedInputTokens,
    ...(usage.cacheCreationInputTokens !== undefined ? { 'covel.usage.cache_creation_input_tokens': usage.cacheCreationInputTokens } : {}),
  };
}
