import { z } from 'zod';

const about = (description: string) => ({ description });

/**
 * The standard OpenTelemetry variables the engine reads (`setup.ts`) or its OTLP exporter reads
 * itself. Listed for docs/configuration.md (`npm run docs:config`); tracing is off unless an
 * endpoint is set.
 */
export const TelemetryEnv = z.object({
  OTEL_EXPORTER_OTLP_ENDPOINT: z
    .string()
    .optional()
    .meta(about('An OTLP/HTTP collector, e.g. `http://localhost:4318`; spans go to `<endpoint>/v1/traces`. Not an http(s) URL: start-up stops naming it.')),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: z.string().optional().meta(about('The full traces URL instead (used as it is).')),
  OTEL_SERVICE_NAME: z.string().optional().meta(about('`service.name`; default `covel-api`, `covel-worker`, or `covel` for `npm start`.')),
  OTEL_RESOURCE_ATTRIBUTES: z
    .string()
    .optional()
    .meta(about('More resource attributes: `key=value` pairs, comma separated (`deployment.environment=prod,...`).')),
  OTEL_EXPORTER_OTLP_HEADERS: z.string().optional().meta(about('Headers for the collector (e.g. an auth token); read by the exporter.')),
  OTEL_BSP_SCHEDULE_DELAY: z.string().optional().meta(about('How often the batch of ended spans is sent, in ms (default 5000); read by the SDK.')),
  OTEL_SDK_DISABLED: z.string().optional().meta(about('`true`: tracing off, whatever the endpoint.')),
  OTEL_TRACES_EXPORTER: z.string().optional().meta(about('`none`: tracing off, whatever the endpoint.')),
});
