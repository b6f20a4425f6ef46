import { SpanStatusCode } from '@opentelemetry/api';
import { ATTR, inSpan, SPAN, startTracingForTests, type TestTracing } from '../../../telemetry';
import type { TurnHarness } from '../../turn/test/harness';
import { eventData as of, playTurn, smallWindowHarness } from './long-session';

describe('traces: the compaction barrier’s summary call', () => {
  let tracing: TestTracing;
  let h: TurnHarness;
  beforeAll(async () => {
    tracing = await startTracingForTests();
    h = await smallWindowHarness();
  });
  afterAll(async () => {
    await h.close();
    await tracing.shutdown();
  });

  it('is a span of the turn job run that ran the barrier, in the trace of the turn, with provider, model and tokens', async () => {
    const session = await h.session();
    let traceId = '';
    for (let i = 1; i <= 24; i++) {
      await inSpan('test.turn', {}, async (span) => {
        traceId = span.spanContext().traceId;
        await playTurn(h, session, `Turn ${i}: ${'I search the flooded archive shelf by shelf, reading every spine aloud. '.repeat(40)}`);
      });
      if (of(await h.events(session.sessionId), 'compaction.summary-requested@1').length > 0) break;
    }
    const requested = of(await h.events(session.sessionId), 'compaction.summary-requested@1');
    expect(requested.length).toBeGreaterThan(0);
    const summaries = tracing.spans().filter((s) => s.name === SPAN.summaryCall && s.spanContext().traceId === traceId);
    expect(summaries.length).toBe(requested.filter((r) => r.executionId === requested.at(-1)!.executionId).length);
    const byId = new Map(tracing.spans().map((s) => [s.spanContext().spanId, s]));
    for (const summary of summaries) {
      const parent = byId.get(summary.parentSpanContext!.spanId)!;
      expect([parent.name, parent.attributes[ATTR.execution]]).toEqual([SPAN.turnJob, requested.at(-1)!.executionId]);
      expect(summary.status.code).not.toBe(SpanStatusCode.ERROR);
      expect(summary.attributes).toMatchObject({ [ATTR.provider]: requested.at(-1)!.provider, [ATTR.model]: requested.at(-1)!.model });
      expect(summary.attributes[ATTR.inputTokens]).toBeGreaterThan(0);
    }
  }, 120_000);
});
