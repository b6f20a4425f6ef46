import {
  type Attributes,
  context,
  isSpanContextValid,
  propagation,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  trace,
  type Tracer,
  type TracerProvider,
} from '@opentelemetry/api';
import { EngineError } from '../errors';
import type { TraceCarrier } from './carrier';

/**
 * The engine's spans, on `@opentelemetry/api` only. With no SDK registered (no OTLP endpoint, see
 * `startTracing`) the API answers with its no-op tracer: spans are not recorded, nothing is injected
 * into job data, and the cost is a few function calls per span.
 */
function tracer(): Tracer {
  // asked per span (several a turn): the tracer is kept while the global provider is the same one
  // (`trace.getTracer` looks the provider up and makes a tracer each time; a provider set or
  // disabled later, as tests and `startTracing` do, is met by the check)
  const provider = trace.getTracerProvider();
  if (kept?.provider !== provider) kept = { provider, tracer: provider.getTracer(TRACER_NAME) };
  return kept.tracer;
}
const TRACER_NAME = 'covel-engine';
let kept: { provider: TracerProvider; tracer: Tracer } | undefined;

export { SpanKind };
export type { Attributes, Span };

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
    span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
    return;
  }
  const summary = errorSummary(error);
  span.recordException(summary);
  span.setStatus({ code: SpanStatusCode.ERROR, message: summary.message });
}

/** Status ERROR without an exception (an outcome that is a failure, not a throw). */
export function markFailed(span: Span, message: string): void {
  if (span.isRecording()) span.setStatus({ code: SpanStatusCode.ERROR, message });
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
  return tracer().startActiveSpan(name, { kind: options.kind ?? SpanKind.INTERNAL, attributes: options.attributes ?? {} }, (span) => runIn(span, work));
}

/**
 * Runs a queue job in its span: a child of the context the job carries (the span that enqueued it),
 * never of whatever is active in this process (the in-process queue runs a job from the call stack
 * of another); a job without one starts its own trace.
 */
export function inJobSpan<T>(name: string, carrier: TraceCarrier | undefined, attributes: Attributes, work: (span: Span) => Promise<T>): Promise<T> {
  const parent = carrier ? propagation.extract(ROOT_CONTEXT, carrier) : ROOT_CONTEXT;
  return tracer().startActiveSpan(name, { kind: SpanKind.CONSUMER, attributes }, parent, (span) => runIn(span, work));
}

/**
 * The active span's ids for a log line (`traceId`, `spanId`), so a line can be found from its trace and
 * back; nothing when no span records (tracing off: the no-op tracer's spans carry no valid context).
 */
export function activeTraceIds(): { traceId?: string; spanId?: string } {
  const ctx = trace.getActiveSpan()?.spanContext();
  return ctx && isSpanContextValid(ctx) ? { traceId: ctx.traceId, spanId: ctx.spanId } : {};
}

/** Sets attributes on the active span (when one is recording). */
export function annotate(attributes: Attributes): void {
  const span = trace.getActiveSpan();
  if (span?.isRecording()) span.setAttributes(attributes);
}

/** The active trace context as job data, or undefined (no SDK, or no span active). */
export function currentTraceCarrier(): TraceCarrier | undefined {
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
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
  return tracer().startActiveSpan(name, { kind: SpanKind.PRODUCER, attributes, root: true }, (span) => runIn(span, work));
}

/** The span starts a new trace here, or continues one from the request's `traceparent` header. */
export function startServerSpan(
  name: string,
  headers: Record<string, string | string[] | undefined>,
  attributes: Attributes,
): { span: Span; run<T>(work: () => T): T } {
  const parent = propagation.extract(ROOT_CONTEXT, headers);
  const span = tracer().startSpan(name, { kind: SpanKind.SERVER, attributes }, parent);
  const active = trace.setSpan(parent, span);
  return { span, run: (work) => context.with(active, work) };
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
