import type { InMemorySpanExporter, ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-base';
import { EngineError } from '../errors';
import { otelApi } from './otel-api';
import { setErrorTextInSpans } from './spans';

/**
 * The one module that touches the OpenTelemetry SDK. `startTracing` registers a tracer provider
 * (AsyncLocalStorage context manager, W3C trace-context propagator, batched OTLP/HTTP exporter)
 * only when an endpoint is configured; otherwise it loads nothing and registers nothing, and
 * `@opentelemetry/api` keeps answering with its no-op tracer.
 */

type Env = Record<string, string | undefined>;

export class TracingConfigError extends EngineError {
  readonly code = 'CONFIG_INVALID';
  readonly category = 'invalid';
  override readonly issues: readonly { path: string; message: string }[];
  constructor(path: string, message: string) {
    super(`bad environment: ${path}: ${message}`);
    this.issues = [{ path, message }];
  }
}

export interface TracingOptions {
  env?: Env;
  /** `service.name` when OTEL_SERVICE_NAME is not set (e.g. covel-api, covel-worker). */
  defaultServiceName: string;
}

/** COVEL_LOG_PLAYER_TEXT on (1/true): failed spans carry the error's message, as log lines do. */
function errorTextOn(env: Env): boolean {
  return ['1', 'true'].includes(env.COVEL_LOG_PLAYER_TEXT?.trim().toLowerCase() ?? '');
}

export interface Tracing {
  /** Where spans go (the OTLP/HTTP traces URL). */
  endpoint: string;
  serviceName: string;
  /** Sends the spans still buffered, then unregisters the provider (process exit). */
  close(): Promise<void>;
}

function checkedUrl(path: string, value: string): string {
  try {
    const url = new URL(value);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('not http(s)');
    return value;
  } catch {
    throw new TracingConfigError(path, `must be an http(s) URL, got "${value}"`);
  }
}

/**
 * The OTLP/HTTP traces URL the standard variables name, or null (tracing off):
 * OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as it is, else OTEL_EXPORTER_OTLP_ENDPOINT + `/v1/traces`.
 * OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none turn it off whatever the endpoint.
 */
export function tracesEndpoint(env: Env = process.env): string | null {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return null;
  if (env.OTEL_TRACES_EXPORTER?.trim().toLowerCase() === 'none') return null;
  const traces = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim();
  if (traces) return checkedUrl('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', traces);
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim();
  if (base) return `${checkedUrl('OTEL_EXPORTER_OTLP_ENDPOINT', base).replace(/\/+$/, '')}/v1/traces`;
  return null;
}

/** Registers the SDK's provider with these exporters; the SDK modules are loaded only here. */
async function register(exporter: SpanExporter, serviceName: string, env: Env, batch: boolean) {
  const { NodeTracerProvider } = await import('@opentelemetry/sdk-trace-node');
  const { BatchSpanProcessor, SimpleSpanProcessor } = await import('@opentelemetry/sdk-trace-base');
  const { defaultResource, resourceFromAttributes } = await import('@opentelemetry/resources');
  const attributes: Record<string, string> = {};
  // OTEL_RESOURCE_ATTRIBUTES: key=value pairs, comma separated (values percent-encoded)
  for (const pair of (env.OTEL_RESOURCE_ATTRIBUTES ?? '').split(',')) {
    const at = pair.indexOf('=');
    if (at > 0) attributes[pair.slice(0, at).trim()] = decodeURIComponent(pair.slice(at + 1).trim());
  }
  const resource = defaultResource().merge(resourceFromAttributes({ ...attributes, 'service.name': serviceName }));
  const processor = batch ? new BatchSpanProcessor(exporter) : new SimpleSpanProcessor(exporter);
  const provider = new NodeTracerProvider({ resource, spanProcessors: [processor] });
  provider.register(); // global provider, AsyncLocalStorage context manager, W3C trace-context propagator
  return async () => {
    await provider.shutdown();
    const { context, propagation, trace } = otelApi();
    trace.disable();
    context.disable();
    propagation.disable();
  };
}

/**
 * Tracing of this process, or null when no endpoint is configured (nothing loaded, nothing
 * registered). Call once at start-up, before the engine; `shutdown()` on exit sends what is buffered.
 */
export async function startTracing(options: TracingOptions): Promise<Tracing | null> {
  const env = options.env ?? process.env;
  const endpoint = tracesEndpoint(env);
  if (!endpoint) return null;
  const serviceName = env.OTEL_SERVICE_NAME?.trim() || options.defaultServiceName;
  setErrorTextInSpans(errorTextOn(env));
  const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-http');
  const shutdown = await register(new OTLPTraceExporter({ url: endpoint }), serviceName, env, true);
  return { endpoint, serviceName, close: shutdown };
}

export interface TestTracing {
  exporter: InMemorySpanExporter;
  /** The spans ended so far. */
  spans(): ReadableSpan[];
  shutdown(): Promise<void>;
}

/** Tests: the same registration with an in-memory exporter, each span exported as it ends (`errorText` as COVEL_LOG_PLAYER_TEXT). */
export async function startTracingForTests(options: { serviceName?: string; errorText?: boolean } = {}): Promise<TestTracing> {
  const { InMemorySpanExporter } = await import('@opentelemetry/sdk-trace-base');
  const exporter = new InMemorySpanExporter();
  setErrorTextInSpans(options.errorText ?? false);
  const shutdown = await register(exporter, options.serviceName ?? 'covel-test', {}, false);
  return { exporter, spans: () => exporter.getFinishedSpans(), shutdown };
}
