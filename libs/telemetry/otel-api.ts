export type OtelApi = typeof import('@opentelemetry/api');

/**
 * Where `@opentelemetry/api` (1.x) keeps what is registered with it (tracer provider, propagator,
 * context manager, diagnostics logger), process-wide, whichever copy of the API registered it. It
 * exists once anything has registered: before that, every answer of the API is its no-op one.
 */
const REGISTRATIONS = Symbol.for('opentelemetry.js.api.1');

let api: OtelApi | undefined;

/**
 * `@opentelemetry/api` once anything has registered with it (`startTracing`, a test's provider, an
 * SDK the host process set up), else null: with nothing registered the API would only answer
 * with its no-op spans and contexts, which the engine's spans know without loading it (~45
 * modules a process, and per test file under Jest). Asked per span: a registration made later
 * counts from then on.
 */
export function registeredOtelApi(): OtelApi | null {
  if (api === undefined && !(REGISTRATIONS in globalThis)) return null;
  return otelApi();
}

/** `@opentelemetry/api`, required at its first use. */
export function otelApi(): OtelApi {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return (api ??= require('@opentelemetry/api') as OtelApi);
}
