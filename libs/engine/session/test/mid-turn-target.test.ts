import { randomUUID } from 'node:crypto';
import { EventStore, migrateToLatest, openDatabase, type OpenDatabase, ReadModels } from '../../../events';
import { IdempotencyKeyMismatchError } from '../idempotency';
import { NoRunningTurnError } from '../mid-turn';
import { engineInlineProjections } from '../../startup/projections';
import { InProcessQueue } from '../../queue';
import { SessionService } from '../session-service';

/**
 * Which turn a mid-turn message joins (issue 16 part 2): the session's earliest unfinished player
 * turn, checked at the version it is appended at; an activation's execution is skipped; none: 409
 * `NO_RUNNING_TURN` and nothing recorded. No turn runs here (the queue only takes the jobs).
 */
describe('the turn a mid-turn message joins', () => {
  let database: OpenDatabase;
  let store: EventStore;
  let queue: InProcessQueue;
  let sessions: SessionService;
  const quiet = { log: () => undefined, warn: () => undefined, error: () => undefined };

  beforeAll(async () => {
    database = await openDatabase({ kind: 'pglite' });
    await migrateToLatest(database.db);
    store = new EventStore(database.db, { inline: engineInlineProjections });
    queue = new InProcessQueue();
    queue.consume({ turn: async () => ({ kind: 'done' }), runtime: async () => ({ kind: 'done' }) });
    sessions = new SessionService({ store, queue, readModels: new ReadModels(database.db), logger: quiet });
  });
  afterAll(async () => {
    await queue.close();
    await database.close();
  });

  async function session() {
    const tenantId = randomUUID();
    const { answer } = await sessions.createSession({ tenantId });
    return { tenantId, sessionId: answer.id };
  }
  const end = async (s: { sessionId: string; tenantId: string }, e: { executionId: string; turnId: string }) =>
    store.append({
      tenantId: s.tenantId,
      streamId: s.sessionId,
      expectedVersion: await store.streamVersion(s.sessionId),
      events: [{ type: 'execution.failed@1', data: { ...e, attempt: 0, error: { code: 'X', message: 'x' } } }],
    });
  const midTurnEvents = async (sessionId: string) =>
    (await store.readStream(sessionId)).flatMap((e) => (e.type === 'player-input.mid-turn@1' ? [[e.data.executionId, e.data.text]] : []));

  it('joins the earliest unfinished player turn, skipping an activation; none left: NoRunningTurnError, nothing recorded', async () => {
    const s = await session();
    const activation = { executionId: randomUUID(), turnId: randomUUID() };
    await store.append({
      tenantId: s.tenantId,
      streamId: s.sessionId,
      expectedVersion: await store.streamVersion(s.sessionId),
      events: [{ type: 'runtime.activated@1', data: { ...activation, messageId: randomUUID(), kind: 'manual', pluginId: 'p', runtimeId: 'r', payload: {} } }],
    });
    const first = (await sessions.submitInput({ ...s, text: 'one' })).answer;
    const second = (await sessions.submitInput({ ...s, text: 'two' })).answer;
    const a = (await sessions.submitMidTurn({ ...s, text: 'a' })).answer;
    expect(a).toEqual({ ...first, messageId: expect.any(String) });
    await end(s, first);
    expect((await sessions.submitMidTurn({ ...s, text: 'b' })).answer).toEqual({ ...second, messageId: expect.any(String) });
    await end(s, second);
    await expect(sessions.submitMidTurn({ ...s, text: 'c' })).rejects.toBeInstanceOf(NoRunningTurnError);
    await end(s, activation);
    await expect(sessions.submitMidTurn({ ...s, text: 'c' })).rejects.toMatchObject({ code: 'NO_RUNNING_TURN', category: 'conflict' });
    expect(await midTurnEvents(s.sessionId)).toEqual([
      [first.executionId, 'a'],
      [second.executionId, 'b'],
    ]);
  });

  it('an Idempotency-Key answers its first message; the key of an ordinary input, or another text, is a mismatch', async () => {
    const s = await session();
    const turn = (await sessions.submitInput({ ...s, text: 'one', idempotencyKey: `in-${s.sessionId}` })).answer;
    const key = `mid-${s.sessionId}`;
    const first = await sessions.submitMidTurn({ ...s, text: 'a', idempotencyKey: key });
    expect(first.replayed).toBe(false);
    expect(await sessions.submitMidTurn({ ...s, text: 'a', idempotencyKey: key })).toEqual({ answer: first.answer, replayed: true });
    await expect(sessions.submitMidTurn({ ...s, text: 'b', idempotencyKey: key })).rejects.toBeInstanceOf(IdempotencyKeyMismatchError);
    await expect(sessions.submitMidTurn({ ...s, text: 'one', idempotencyKey: `in-${s.sessionId}` })).rejects.toBeInstanceOf(IdempotencyKeyMismatchError);
    await expect(sessions.submitInput({ ...s, text: 'a', idempotencyKey: key })).rejects.toBeInstanceOf(IdempotencyKeyMismatchError);
    // a repeat is answered even once the turn has ended
    await end(s, turn);
    expect(await sessions.submitMidTurn({ ...s, text: 'a', idempotencyKey: key })).toEqual({ answer: first.answer, replayed: true });
    expect(await midTurnEvents(s.sessionId)).toEqual([[turn.executionId, 'a']]);
  });

  it('another tenant: session not found', async () => {
    const s = await session();
    await sessions.submitInput({ ...s, text: 'one' });
    await expect(sessions.submitMidTurn({ ...s, tenantId: randomUUID(), text: 'a' })).rejects.toMatchObject({ code: 'SESSION_NOT_FOUND' });
  });
});
