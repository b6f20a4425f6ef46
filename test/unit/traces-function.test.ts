import { join } from 'node:path';
import { SpanStatusCode } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { ATTR, SPAN, startTracingForTests, type TestTracing } from '../../libs/telemetry';
import { behaviour } from '../fixtures/emit-plugins/beacon/server';
import { type EmbeddedEngine, startEmbedded } from '../support/embedded';

/** Issue 17, traces of a function runtime (the beacon's keeper) through the real API and worker (embedded). */
describe('traces: a function runtime’s code call', () => {
  let tracing: TestTracing;
  let covel: EmbeddedEngine;
  beforeAll(async () => {
    tracing = await startTracingForTests({ errorText: true }); // as COVEL_LOG_PLAYER_TEXT=1: the message is kept
    covel = await startEmbedded({ COVEL_PLUGINS_DIR: join(__dirname, '..', 'fixtures', 'emit-plugins') });
  }, 60_000);
  afterAll(async () => {
    await covel?.stop();
    await tracing?.shutdown();
    behaviour.mode = 'emit';
  });

  /** The keeper's runtime job span of the execution (once ended) and the function call spans under it. */
  async function keeperOf(executionId: string): Promise<{ job: ReadableSpan; calls: ReadableSpan[] }> {
    const deadline = Date.now() + 20_000;
    for (;;) {
      const job = tracing
        .spans()
        .find((s) => s.name === SPAN.runtimeJob && s.attributes[ATTR.execution] === executionId && s.attributes[ATTR.runtime] === 'keeper');
      if (job) return { job, calls: tracing.spans().filter((s) => s.name === SPAN.functionCall && s.parentSpanContext?.spanId === job.spanContext().spanId) };
      if (Date.now() > deadline) throw new Error('no keeper span');
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  it('is a span under its runtime job (runtime type function); code that throws marks it ERROR with the exception', async () => {
    const client = await covel.newTenant();
    behaviour.mode = 'emit';
    const lit = await client.submit((await client.createSession({})).id, 'Light the beacon');
    expect(await client.waitFor(lit.executionId, 20_000)).toBe('committed');
    const ok = await keeperOf(lit.executionId);
    expect(ok.job.attributes).toMatchObject({ [ATTR.runtimeType]: 'function', [ATTR.runtimeResult]: 'produced' });
    expect(ok.calls.map((s) => s.status.code)).toEqual([SpanStatusCode.UNSET]);

    behaviour.mode = 'emit-then-throw';
    const wet = await client.submit((await client.createSession({})).id, 'Light the beacon');
    await expect(client.waitFor(wet.executionId, 20_000)).rejects.toThrow('the wood was wet');
    const failed = await keeperOf(wet.executionId);
    expect(failed.calls).toHaveLength(1);
    expect(failed.calls[0].status.code).toBe(SpanStatusCode.ERROR);
    expect(failed.calls[0].events.map((e) => [e.name, String(e.attributes?.['exception.message'])])).toEqual([
      ['exception', expect.stringContaining('the wood was wet')],
    ]);
  }, 60_000);
});
