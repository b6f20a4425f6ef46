import { ExecutionWaiter, parseEndedNotification } from '../execution-waiter';
import type { ExecutionView } from '../read-models';

/**
 * What ExecutionWaiter makes of an end's notification, with the LISTEN connection given as the
 * function it is (the notifications PostgreSQL sends are test/integration/execution-waiter.test.ts'):
 * every process hears every end, and only a process waiting for that execution reads the row.
 */
describe('ExecutionWaiter: notifications', () => {
  const row = (executionId: string, fields: Record<string, unknown> = {}) =>
    JSON.stringify({
      execution_id: executionId,
      tenant_id: 'tenant-a',
      session_id: 'session-1',
      turn_id: 'turn-1',
      status: 'committed',
      attempts: 1,
      worker_id: null,
      submitted_version: 3,
      error_code: null,
      error_message: null,
      submitted_at: '2026-12-06T09:00:00.000Z',
      updated_at: '2026-12-06T09:00:01.000Z',
      ...fields,
    });

  function listeningWaiter(read: (tenantId: string, executionId: string) => Promise<ExecutionView | null>) {
    let notify: (payload: string) => void = () => undefined;
    const waiter = new ExecutionWaiter({
      listen: async (_channel, onNotify) => {
        notify = onNotify;
        return { close: async () => undefined };
      },
      read,
    });
    return { waiter, notify: (payload: string) => notify(payload) };
  }

  it('a row no waiter of this process asked for is not read: one whose view would not parse is heard without a failure, and still counts as heard', async () => {
    const reads: string[] = [];
    const { waiter, notify } = listeningWaiter(async (_tenantId, executionId) => {
      reads.push(executionId);
      return null;
    });
    const mark = await waiter.beforeSubmit();
    waiter.submittedAfter(mark, 'tenant-a', 'exec-2');
    // a running row whose waiting_for is not JSON: its view throws when it is built
    expect(() => parseEndedNotification(row('exec-1', { status: 'running', waiting_for: '{not json' }))).toThrow();
    expect(() => notify(row('exec-1', { status: 'running', waiting_for: '{not json' }))).not.toThrow();
    // a notification of a submitted execution, even one not read, leaves its waits to read
    notify(row('exec-2', { status: 'running', waiting_for: '{not json' }));
    await expect(waiter.wait({ tenantId: 'tenant-a', executionId: 'exec-2', timeoutMs: 600_000 })).resolves.toBeNull();
    expect(reads).toEqual(['exec-2']);
    await waiter.close();
  });

  it('a waiter of this process is answered by the row, for its tenant only', async () => {
    const { waiter, notify } = listeningWaiter(async () => null);
    const watched = new AbortController();
    const { ended } = await waiter.watch({ tenantId: 'tenant-a', executionId: 'exec-3', signal: watched.signal });
    notify(row('exec-3', { tenant_id: 'tenant-b' }));
    notify(row('exec-3'));
    await expect(ended).resolves.toMatchObject({ executionId: 'exec-3', status: 'committed', submittedAt: '2026-12-06T09:00:00.000Z' });
    await waiter.close();
  });

  it("a wait's onLeave ends it early with the current state, and the listener it registered is taken away once the wait is answered", async () => {
    const running = { executionId: 'exec-8', status: 'running' } as ExecutionView;
    const { waiter, notify } = listeningWaiter(async () => running);
    const leaves = new Set<() => void>();
    const onLeave = (leave: () => void) => {
      leaves.add(leave);
      return () => void leaves.delete(leave);
    };
    // the client leaves: answered at once with what the read says, the listener gone
    const left = waiter.wait({ tenantId: 'tenant-a', executionId: 'exec-8', timeoutMs: 600_000, onLeave });
    await new Promise((resolve) => setImmediate(resolve));
    expect(leaves.size).toBe(1);
    for (const leave of [...leaves]) leave();
    await expect(left).resolves.toBe(running);
    expect(leaves.size).toBe(0);
    expect(waiter.pending).toBe(0);
    // answered by the end's notification: the listener is taken away, a late leave does nothing
    const ended = waiter.wait({ tenantId: 'tenant-a', executionId: 'exec-9', timeoutMs: 600_000, onLeave });
    await new Promise((resolve) => setImmediate(resolve));
    notify(row('exec-9'));
    await expect(ended).resolves.toMatchObject({ executionId: 'exec-9', status: 'committed' });
    expect(leaves.size).toBe(0);
    await waiter.close();
  });

  it('parseEndedNotification: an id alone, a payload that is not JSON, a row that does not parse, an ended row', () => {
    expect(parseEndedNotification('exec-4')).toEqual({ executionId: 'exec-4' });
    expect(parseEndedNotification('{oops')).toEqual({ executionId: '{oops' });
    expect(parseEndedNotification(JSON.stringify({ execution_id: 'exec-5' }))).toEqual({ executionId: 'exec-5' });
    expect(parseEndedNotification(JSON.stringify({ execution_id: 5 }))).toEqual({ executionId: JSON.stringify({ execution_id: 5 }) });
    expect(parseEndedNotification(row('exec-6', { status: 'running' }))).toEqual({ executionId: 'exec-6' });
    expect(parseEndedNotification(row('exec-7'))).toMatchObject({ executionId: 'exec-7', ended: { tenantId: 'tenant-a', view: { status: 'committed' } } });
  });
});
