import { RuntimeJobSchema, TurnJobSchema, turnJobOf } from '../port';

const ids = { executionId: 'e-1', sessionId: 's-1', tenantId: 't-1' };
const trace = { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' };

describe('job data: the optional trace context', () => {
  it('is kept when well formed, on turn and runtime jobs, and a runtime job hands it to its turn job', () => {
    expect(TurnJobSchema.parse({ ...ids, trace })).toEqual({ ...ids, trace });
    const runtime = RuntimeJobSchema.parse({ ...ids, attempt: 1, pluginId: 'p', runtimeId: 'r', trace });
    expect(runtime.trace).toEqual(trace);
    expect(turnJobOf(runtime)).toEqual({ ...ids, trace });
    expect(turnJobOf({ ...ids })).toStrictEqual({ ...ids }); // none: no `trace` key at all
  });

  it('a malformed one is dropped, the job itself still parses (a trace never fails a job)', () => {
    for (const bad of [{ traceparent: 5 }, { traceparent: '' }, 'not an object', { tracestate: 'x' }, { traceparent: 'x'.repeat(300) }]) {
      const parsed = TurnJobSchema.safeParse({ ...ids, trace: bad });
      expect(parsed.success && parsed.data).toEqual({ ...ids, trace: undefined });
    }
    // the ids are still checked
    expect(TurnJobSchema.safeParse({ ...ids, executionId: '', trace }).success).toBe(false);
  });
});
