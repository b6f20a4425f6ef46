import { ATTR, SPAN } from '../../libs/telemetry';
import { startCollector } from '../support/otlp-collector';
import { startStack, type Stack } from '../support/stack';

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
    expect(turnRuns.length).toBeGreaterThanOrEqual(1); // a stage of one runtime runs inline: one run can do the whole turn
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
