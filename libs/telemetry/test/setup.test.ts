import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { context, isSpanContextValid, propagation, ROOT_CONTEXT, trace } from '@opentelemetry/api';
import { currentTraceCarrier, inSpan, startTracing, TracingConfigError, tracesEndpoint, withTraceCarrier } from '..';

describe('tracesEndpoint: the standard OTLP variables', () => {
  it('is null (tracing off) with no endpoint, or when the SDK or the traces exporter is turned off', () => {
    expect(tracesEndpoint({})).toBeNull();
    expect(tracesEndpoint({ OTEL_EXPORTER_OTLP_ENDPOINT: '  ' })).toBeNull();
    expect(tracesEndpoint({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_SDK_DISABLED: 'true' })).toBeNull();
    expect(tracesEndpoint({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces', OTEL_TRACES_EXPORTER: 'none' })).toBeNull();
  });

  it('takes the traces endpoint as it is, else the base endpoint + /v1/traces', () => {
    expect(tracesEndpoint({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' })).toBe('http://collector:4318/v1/traces');
    expect(tracesEndpoint({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://a:4318', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://b/otlp/spans' })).toBe(
      'https://b/otlp/spans',
    );
  });

  it('a value that is not an http(s) URL stops start-up, naming the variable', () => {
    expect(() => tracesEndpoint({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' })).toThrow(TracingConfigError);
    expect(() => tracesEndpoint({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'not a url' })).toThrow(/OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: must be an http\(s\) URL/);
  });
});

describe('startTracing', () => {
  it('with no endpoint registers nothing: the API answers with its no-op tracer, no context is propagated', async () => {
    expect(await startTracing({ env: {}, defaultServiceName: 'covel-test' })).toBeNull();
    const span = trace.getTracer('any').startSpan('x');
    expect(span.isRecording()).toBe(false);
    expect(isSpanContextValid(span.spanContext())).toBe(false);
    await inSpan('covel.turn.job', {}, async (active) => {
      expect(active.isRecording()).toBe(false);
      expect(currentTraceCarrier()).toBeUndefined();
      const job = { executionId: 'e' };
      expect(withTraceCarrier(job)).toBe(job); // job data unchanged: no `trace` field
    });
    // no propagator registered: a traceparent is not even read
    const carrier = { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' };
    expect(trace.getSpanContext(propagation.extract(ROOT_CONTEXT, carrier))).toBeUndefined();
    expect(context.active()).toBe(ROOT_CONTEXT);
  });

  it('with an endpoint registers the SDK: spans are recorded, the W3C context propagates, and close() exports them over OTLP/HTTP', async () => {
    const received: { url: string; contentType: string | undefined; body: string }[] = [];
    const collector = createServer((req: IncomingMessage, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        received.push({ url: req.url ?? '', contentType: req.headers['content-type'], body: Buffer.concat(chunks).toString('utf8') });
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((r) => collector.listen(0, '127.0.0.1', r));
    try {
      const { port } = collector.address() as AddressInfo;
      const tracing = await startTracing({
        env: { OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`, OTEL_SERVICE_NAME: 'covel-worker-7' },
        defaultServiceName: 'covel',
      });
      expect(tracing).toMatchObject({ endpoint: `http://127.0.0.1:${port}/v1/traces`, serviceName: 'covel-worker-7' });
      let traceId = '';
      await inSpan('covel.turn.job', { attributes: { 'covel.session.id': 's-1' } }, async (span) => {
        expect(span.isRecording()).toBe(true);
        traceId = span.spanContext().traceId;
        // what a job enqueued here carries: this span's context
        expect(withTraceCarrier({ executionId: 'e' }).trace?.traceparent).toMatch(new RegExp(`^00-${traceId}-${span.spanContext().spanId}-01$`));
      });
      await tracing!.close();
      expect(received.map((r) => [r.url, r.contentType])).toEqual([['/v1/traces', 'application/json']]);
      expect(received[0].body).toContain('"covel.turn.job"');
      expect(received[0].body).toContain('covel-worker-7');
      // closed: back to the no-op tracer
      expect(trace.getTracer('any').startSpan('x').isRecording()).toBe(false);
    } finally {
      await new Promise((r) => collector.close(r));
    }
  });
});
