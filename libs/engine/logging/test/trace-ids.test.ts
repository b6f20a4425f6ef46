import { inSpan, startTracingForTests } from '../../../telemetry';
import { createLogger } from '..';

function capture() {
  const lines: Record<string, unknown>[] = [];
  const logger = createLogger({ format: 'json', level: 'info', playerText: false, destination: { write: (line) => lines.push(JSON.parse(line)) } });
  return { lines, logger };
}

describe('log lines and traces', () => {
  it('with tracing off a line carries no trace ids', async () => {
    const { lines, logger } = capture();
    await inSpan('covel.turn.job', {}, async () => logger.log('inside a span of the no-op tracer'));
    expect(lines).toHaveLength(1);
    expect(lines[0]).not.toHaveProperty('traceId');
    expect(lines[0]).not.toHaveProperty('spanId');
  });

  it('with tracing on a line logged in a span carries its trace and span ids; outside one, none', async () => {
    const tracing = await startTracingForTests();
    try {
      const { lines, logger } = capture();
      const ids = await inSpan('covel.turn.job', {}, async (span) => {
        logger.log('in the job');
        return span.spanContext();
      });
      logger.log('after the job');
      expect(lines[0]).toMatchObject({ traceId: ids.traceId, spanId: ids.spanId });
      expect(lines[0].traceId).toMatch(/^[0-9a-f]{32}$/);
      expect(lines[1]).not.toHaveProperty('traceId');
    } finally {
      await tracing.shutdown();
    }
  });
});
