import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ATTR, SPAN } from '../../libs/telemetry';
import { startStack, type Stack } from '../support/stack';

/** One span as OTLP/HTTP JSON carries it (ids in hex), with the service that sent it. */
interface OtlpSpan {
  service: string;
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  attributes: Record<string, unknown>;
  status: { code?: number; message?: string };
}

interface OtlpAttribute {
  key: string;
  value: OtlpValue;
}
interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  boolValue?: boolean;
  doubleValue?: number;
  arrayValue?: { values: OtlpValue[] };
}
interface OtlpExport {
  resourceSpans: {
    resource: { attributes: OtlpAttribute[] };
    scopeSpans: {
      spans: { traceId: string; spanId: string; parentSpanId?: string; name: string; attributes?: OtlpAttribute[]; status?: OtlpSpan['status'] }[];
    }[];
  }[];
}

const valueOf = (v: OtlpValue): unknown =>
  v.arrayValue ? v.arrayValue.values.map(valueOf) : (v.stringValue ?? (v.intValue !== undefined ? Number(v.intValue) : (v.boolValue ?? v.doubleValue)));
const attributes = (list: OtlpAttribute[] = []) => Object.fromEntries(list.map((a) => [a.key, valueOf(a.value)]));

/** A stand-in OTLP/HTTP collector: keeps every span posted to /v1/traces. */
async function startCollector(): Promise<{ server: Server; url: string; spans: OtlpSpan[] }> {
  const spans: OtlpSpan[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.url === '/v1/traces') {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as OtlpExport;
        for (const rs of body.resourceSpans) {
          const service = String(attributes(rs.resource.attributes)['service.name']);
          for (const ss of rs.scopeSpans)
            for (const s of ss.spans)
              spans.push({
                service,
                traceId: s.traceId,
                spanId: s.spanId,
                parentSpanId: s.parentSpanId || undefined,
                name: s.name,
                attributes: attributes(s.attributes),
                status: s.status ?? {},
              });
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, spans };
}

/**
 * Issue 17, traces across processes: the API and a worker as their own processes on PostgreSQL and
 * BullMQ, each exporting over OTLP/HTTP to a collector; one turn is one trace from the API's request
 * through the Redis hop to the worker's jobs and model calls.
 */
describe('OpenTelemetry traces across the API and a BullMQ worker', () => {
  let collector: Awaited<ReturnType<typeof startCollector>>;
  let stack: Stack;
  beforeAll(async () => {
    collector = await startCollector();
    stack = await startStack({ workers: 1, env: { OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, OTEL_BSP_SCHEDULE_DELAY: '100' } });
  }, 120_000);
  afterAll(async () => {
    await stack?.stop();
    await new Promise((r) => collector?.server.close(r));
  }, 60_000);

  it('one trace: the API request (covel-api) → the turn job runs → the runtime jobs → their model calls (covel-worker)', async () => {
    const { client } = stack;
    const { id } = await client.createSession();
    const { executionId } = await client.submit(id, 'Cross the bridge');
    expect(await client.waitFor(executionId, 60_000)).toBe('committed');

    // the batches arrive a moment after the spans end: wait for the turn job's last run
    const deadline = Date.now() + 30_000;
    while (!collector.spans.some((s) => s.name === SPAN.turnJob && s.attributes[ATTR.execution] === executionId && s.attributes[ATTR.step] === 'done')) {
      if (Date.now() > deadline) throw new Error(`no ended turn job span: ${JSON.stringify(collector.spans.map((s) => s.name))}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    const ofExecution = collector.spans.filter((s) => s.attributes[ATTR.execution] === executionId);
    const traceIds = new Set(ofExecution.map((s) => s.traceId));
    expect(traceIds.size).toBe(1);
    const spans = collector.spans.filter((s) => traceIds.has(s.traceId));
    const byId = new Map(spans.map((s) => [s.spanId, s]));

    const roots = spans.filter((s) => !s.parentSpanId);
    expect(roots.map((s) => [s.name, s.service])).toEqual([['POST /v1/sessions/:id/inputs', 'covel-api']]);
    const turnRuns = spans.filter((s) => s.name === SPAN.turnJob);
    expect(turnRuns.length).toBeGreaterThanOrEqual(2); // a stage's fan-out, then done
    for (const run of turnRuns) expect([run.service, run.parentSpanId]).toEqual(['covel-worker', roots[0].spanId]);
    const runtimeJobs = spans.filter((s) => s.name === SPAN.runtimeJob);
    expect(runtimeJobs.length).toBeGreaterThan(0);
    for (const job of runtimeJobs) {
      const parent = byId.get(job.parentSpanId!);
      expect(parent?.name).toBe(SPAN.turnJob);
      expect(parent?.attributes[ATTR.stageRuntimes]).toContain(`${job.attributes[ATTR.plugin]}/${job.attributes[ATTR.runtime]}`);
    }
    const calls = spans.filter((s) => s.name === SPAN.modelCall);
    expect(calls.length).toBeGreaterThan(0);
    for (const call of calls) {
      expect(byId.get(call.parentSpanId!)?.name).toBe(SPAN.runtimeJob);
      expect(call.attributes[ATTR.inputTokens]).toBeGreaterThan(0);
      expect(call.attributes[ATTR.model]).toEqual(expect.any(String));
    }
    // the narrator's call is among them
    expect(calls.some((c) => byId.get(c.parentSpanId!)?.attributes[ATTR.runtime] === 'narrator')).toBe(true);
  }, 120_000);
});
