import { randomUUID } from 'node:crypto';
import { EventStore, migrateToLatest, openDatabase, type OpenDatabase, ReadModels } from '../../../events';
import { engineInlineProjections } from '../../startup/projections';
import { InProcessQueue, type TurnJob } from '../../queue';
import { SessionService } from '../session-service';
import { Sweeper } from '../../turn/sweeper';

/**
 * Per-session order without polling: the API enqueues an input only when it is its session's
 * earliest pending execution; the sweeper enqueues only each session's earliest pending execution,
 * once idle. (The hand-off at the end of an execution is tested with the turn steps.)
 */
describe('who enqueues a turn job', () => {
  let database: OpenDatabase;
  let store: EventStore;
  let readModels: ReadModels;
  let queue: InProcessQueue;
  let sessions: SessionService;
  const enqueued: TurnJob[] = [];
  const quiet = { log: () => undefined, warn: () => undefined, error: () => undefined };

  beforeAll(async () => {
    database = await openDatabase({ kind: 'pglite' });
    await migrateToLatest(database.db);
    store = new EventStore(database.db, { inline: engineInlineProjections });
    readModels = new ReadModels(database.db);
    queue = new InProcessQueue();
    // records the turn jobs it is given (as they are enqueued: the in-process queue starts a job at
    // once while it has room), runs no turn: nothing ends, every input stays pending
    queue.consume({
      turn: async (job) => {
        enqueued.push(job);
        return { kind: 'done' };
      },
      runtime: async () => ({ kind: 'done' }),
    });
    sessions = new SessionService({ store, queue, readModels, logger: quiet });
  });
  afterAll(async () => {
    await queue.close();
    await database.close();
  });

  const enqueuedFor = (sessionId: string) => enqueued.filter((j) => j.sessionId === sessionId).map((j) => j.executionId);
  const sweeper = (stalledAfterMs: number) => new Sweeper({ readModels, queue, logger: quiet, options: { intervalMs: 60_000, stalledAfterMs } });

  it("the API enqueues an input only when it is its session's earliest pending execution", async () => {
    const tenantId = randomUUID();
    const { answer: session } = await sessions.createSession({ tenantId });
    const first = (await sessions.submitInput({ tenantId, sessionId: session.id, text: 'one' })).answer;
    await sessions.submitInput({ tenantId, sessionId: session.id, text: 'two' });
    await sessions.submitInput({ tenantId, sessionId: session.id, text: 'three' });
    expect(enqueuedFor(session.id)).toEqual([first.executionId]);
    // a keyed repeat of a later input enqueues the session's head (the later one follows by hand-off)
    const keyed = await sessions.submitInput({ tenantId, sessionId: session.id, text: 'four', idempotencyKey: 'k-four' });
    const repeat = await sessions.submitInput({ tenantId, sessionId: session.id, text: 'four', idempotencyKey: 'k-four' });
    expect(repeat).toEqual({ answer: keyed.answer, replayed: true });
    expect(enqueuedFor(session.id)).toEqual([first.executionId, first.executionId]);
  });

  it('the decision comes with the input’s append (its statement reads the earlier pending execution): no read of the executions view after it', async () => {
    const tenantId = randomUUID();
    const { answer: session } = await sessions.createSession({ tenantId });
    const after = jest.spyOn(readModels, 'earliestPendingExecution');
    const fail = async (execution: { executionId: string; turnId: string }) =>
      store.append({
        tenantId,
        streamId: session.id,
        expectedVersion: (await store.readStream(session.id)).length,
        events: [{ type: 'execution.failed@1', data: { ...execution, attempt: 0, error: { code: 'X', message: 'x' } } }],
      });
    try {
      const first = (await sessions.submitInput({ tenantId, sessionId: session.id, text: 'one' })).answer;
      const second = (await sessions.submitInput({ tenantId, sessionId: session.id, text: 'two' })).answer;
      expect(enqueuedFor(session.id)).toEqual([first.executionId]);
      // the first ends: the second is the head now (its hand-off's), a third waits for it
      await fail(first);
      await sessions.submitInput({ tenantId, sessionId: session.id, text: 'three' });
      expect(enqueuedFor(session.id)).toEqual([first.executionId]);
      // the second and the third end too: nothing pending, the next input is enqueued at once
      await fail(second);
      const [, , third] = (await store.readStream(session.id)).filter((e) => e.type === 'player-input.submitted@1');
      if (third?.type !== 'player-input.submitted@1') throw new Error('no third input');
      await fail(third.data);
      const fourth = (await sessions.submitInput({ tenantId, sessionId: session.id, text: 'four' })).answer;
      expect(enqueuedFor(session.id)).toEqual([first.executionId, fourth.executionId]);
      expect(after).not.toHaveBeenCalled();
    } finally {
      after.mockRestore();
    }
  });

  it("the sweeper enqueues each session's earliest pending execution, once it is idle, and no later one", async () => {
    const tenantId = randomUUID();
    const heads: string[] = [];
    const ids: string[] = [];
    for (let s = 0; s < 3; s++) {
      const { answer: session } = await sessions.createSession({ tenantId });
      ids.push(session.id);
      for (let i = 0; i < 3; i++) {
        const { answer } = await sessions.submitInput({ tenantId, sessionId: session.id, text: `input ${i}` });
        if (i === 0) heads.push(answer.executionId);
      }
    }
    enqueued.length = 0;
    // nothing has been idle for a minute
    expect(await sweeper(60_000).sweep()).toBe(0);
    await new Promise((r) => setTimeout(r, 30));
    const swept = await sweeper(10).sweep();
    const mine = enqueued.filter((j) => ids.includes(j.sessionId)).map((j) => j.executionId);
    expect(mine.sort()).toEqual([...heads].sort());
    expect(swept).toBeGreaterThanOrEqual(3); // the first test's session is pending too
    // and resumeAll (the embedded start-up) takes the same heads, however recent
    enqueued.length = 0;
    await sweeper(60_000).resumeAll();
    expect(
      enqueued
        .filter((j) => ids.includes(j.sessionId))
        .map((j) => j.executionId)
        .sort(),
    ).toEqual([...heads].sort());
  });
});
