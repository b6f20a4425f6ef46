import { addToLogScope, logScope, withLogScope } from '..';

describe('log scopes', () => {
  it("a job's scope starts from its own fields, never the enclosing job's (the in-process queue runs the next job inside the one that enqueued it)", async () => {
    await withLogScope({ job: 'turn', executionId: 'A', attempt: 3 }, async () => {
      addToLogScope({ runtime: 'p/r', callId: 'call-of-A' });
      await withLogScope({ job: 'turn', executionId: 'B', tenantId: undefined }, async () => {
        expect(logScope()).toEqual({ job: 'turn', executionId: 'B' });
        addToLogScope({ attempt: 1 });
      });
      expect(logScope()).toEqual({ job: 'turn', executionId: 'A', attempt: 3, runtime: 'p/r', callId: 'call-of-A' });
    });
    expect(logScope()).toEqual({});
  });
});
