import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { TracerProvider } from '@opentelemetry/api';
import { ATTR } from './attributes';
import { registeredOtelApi } from './otel-api';
import { markFailed, startServerSpan } from './spans';

/** What the middleware reads of an Express request once it has been answered. */
type RoutedRequest = IncomingMessage & { route?: { path?: unknown }; baseUrl?: string; tenant?: { id?: unknown } };

const pathOf = (url: string | undefined) => (url ?? '/').split('?')[0];

/** The API's own no-op provider (the one a proxy with no SDK behind it answers with), once the API is loaded. */
let noopProvider: TracerProvider | undefined;

/**
 * Whether an SDK is registered (startTracing): asked per request, so one registered later counts from
 * then on. With none, every span would be a non-recording one, made through a new ProxyTracer.
 */
function tracing(): boolean {
  const api = registeredOtelApi();
  if (!api) return false; // nothing registered with the API at all
  const provider = api.trace.getTracerProvider();
  noopProvider ??= new api.ProxyTracerProvider().getDelegate();
  return !(provider instanceof api.ProxyTracerProvider) || provider.getDelegate() !== noopProvider;
}

/**
 * One SERVER span per HTTP request, the root of a turn's trace when the request enqueues one (or a
 * child of the caller's `traceparent`). Named `METHOD /route/:param` once the router has matched
 * (no ids in the name); the tenant id, when the request was authenticated, is an attribute.
 * A 5xx answer marks the span ERROR. With no SDK registered the request goes on at once: no span,
 * not even a no-op one (it would not record; issue 33: CPU per request).
 */
export function httpServerSpans(): (req: IncomingMessage, res: ServerResponse, next: () => void) => void {
  return (req, res, next) => {
    if (!tracing()) return next();
    const method = req.method ?? 'GET';
    const { span, run } = startServerSpan(method, req.headers as IncomingHttpHeaders, { [ATTR.httpMethod]: method, [ATTR.urlPath]: pathOf(req.url) });
    if (!span.isRecording()) return next();
    let ended = false;
    const end = () => {
      if (ended) return;
      ended = true;
      const routed = req as RoutedRequest;
      const route = typeof routed.route?.path === 'string' ? `${routed.baseUrl ?? ''}${routed.route.path}` : null;
      if (route) span.updateName(`${method} ${route}`).setAttribute(ATTR.httpRoute, route);
      if (typeof routed.tenant?.id === 'string') span.setAttribute(ATTR.tenant, routed.tenant.id);
      span.setAttribute(ATTR.httpStatus, res.statusCode);
      if (res.statusCode >= 500) markFailed(span, `HTTP ${res.statusCode}`);
      span.end();
    };
    res.once('finish', end);
    res.once('close', end);
    run(next);
  };
}
