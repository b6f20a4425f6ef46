import { randomUUID } from 'node:crypto';
import { EventStore, migrateToLatest, type NewEvent, openDatabase, type OpenDatabase, StreamTenantMismatchError } from '../../libs/events';
import { FencedOutError, SessionJournal } from '../../libs/engine';
import { ExecutionRun } from '../../libs/engine/execution/fenced-append';
import type { ExecutionJournal } from '../../libs/engine/journal/journal';
import { type CountingDatabase, countingDatabase } from '../support/statement-counter';
import { createTestDatabase } from '../support/stack';

/**
 * Sibling runtimes of one turn append to the same session from different processes (each its own
 * journal, its own pool). Issue 33 measured them losing to each other: every append that came
 * second was rolled back, caught up and tried again. They now wait for the session's lock and
 * catch up under it: no append fails, and what each writes is what it wrote before.
 */
describe('fenced appends of sibling runtimes on the real PostgreSQL', () => {
  let database: { url: string; drop(): Promise<void> };
  let open: OpenDatabase;
  let counting: CountingDatabase[];
  beforeAll(async () => {
    database = await createTestDatabase();
    open = await openDatabase({ kind: 'postgres', url: database.url, poolSize: 4 });
    await migrateToLatest(open.db);
    counting = [countingDatabase(database.url), countingDatabase(database.url)];
  });
  afterAll(async () => {
    for (const c of counting) await c.close();
    await open.close();
    await database.drop();
  });

  const TURN = { executionId: 'e1', turnId: 't1' };

  /** A session with one claimed execution (attempt 1). */
  async function claimedSession(): Promise<string> {
    const sessionId = randomUUID();
    await new EventStore(open.db).append({
      tenantId: 'tenant',
      streamId: sessionId,
      expectedVersion: 0,
      events: [
        { type: 'session.created@1', data: { sessionId, worldId: null, locale: 'en' } },
        { type: 'player-input.submitted@1', data: { ...TURN, messageId: 'm1', text: 'go' } },
        { type: 'execution.started@1', data: { ...TURN, attempt: 1, workerId: 'w' } },
      ],
    });
    return sessionId;
  }

  /** One runtime's run of attempt 1 in its own "process": its own store, pool and journal. */
  async function runtimeRun(sessionId: string, db: CountingDatabase, attempt = 1): Promise<ExecutionRun> {
    const store = new EventStore(db.db);
    return new ExecutionRun(store, new SessionJournal(await store.readStream(sessionId)), { tenantId: 'tenant', sessionId, ...TURN }, attempt);
  }

  /** The runtime's reply for a step, once (a step already recorded appends nothing, as the agent loop does). */
  const reply =
    (runtimeId: string, step: number) =>
    (execution: ExecutionJournal): NewEvent[] =>
      execution.agentLoops.get(`p/${runtimeId}`)?.replies.has(step)
        ? []
        : [
            {
              type: 'llm.responded@1',
              data: {
                ...TURN,
                callId: `${runtimeId}-${step}`,
                pluginId: 'p',
                runtimeId,
                finishReason: 'stop',
                usage: { inputTokens: 1, outputTokens: 1, cachedInputTokens: 0 },
                step,
                reply: JSON.stringify({ text: `${runtimeId} ${step}` }),
              },
            },
          ];

  const STEPS = 6;
  const countOf = (db: CountingDatabase, start: string) => db.statements.filter((s) => s.toLowerCase().startsWith(start)).length;

  async function respondedOf(sessionId: string) {
    const events = await new EventStore(open.db).readStream(sessionId);
    return events.flatMap((e) => (e.type === 'llm.responded@1' ? [`${e.data.runtimeId} ${e.data.step}`] : []));
  }

  it('two runtimes taking turns: every append lands on its first try (no ROLLBACK), each step once', async () => {
    const sessionId = await claimedSession();
    const [a, b] = [await runtimeRun(sessionId, counting[0]), await runtimeRun(sessionId, counting[1])];
    for (const c of counting) c.reset();
    // each append comes after the other runtime's: its journal is always one event behind
    for (let step = 1; step <= STEPS; step++) {
      await a.append(reply('a', step));
      await b.append(reply('b', step));
    }
    for (const c of counting) {
      expect(countOf(c, 'rollback')).toBe(0);
      expect(countOf(c, 'begin')).toBe(STEPS);
      expect(countOf(c, 'commit')).toBe(STEPS);
      // begin, lock, a conditional insert that returns what came first, the insert built again from it, commit
      expect(c.statements.length).toBeLessThanOrEqual(5 * STEPS);
    }
    expect(await respondedOf(sessionId)).toEqual(Array.from({ length: STEPS }, (_, i) => [`a ${i + 1}`, `b ${i + 1}`]).flat());
    // each journal is the stream: it caught up with the other's appends
    expect(a.journal.version).toBe(3 + 2 * STEPS - 1);
    expect(b.journal.version).toBe(3 + 2 * STEPS);
  });

  it('two runtimes appending at once: no append fails or repeats, whatever the interleaving', async () => {
    const sessionId = await claimedSession();
    const runs = [await runtimeRun(sessionId, counting[0]), await runtimeRun(sessionId, counting[1])];
    for (const c of counting) c.reset();
    await Promise.all(
      runs.map(async (run, i) => {
        for (let step = 1; step <= STEPS; step++) await run.append(reply(i === 0 ? 'a' : 'b', step));
      }),
    );
    for (const c of counting) {
      expect(countOf(c, 'rollback')).toBe(0);
      expect(countOf(c, 'begin')).toBe(STEPS);
    }
    const responded = await respondedOf(sessionId);
    expect(responded.filter((r) => r.startsWith('a '))).toEqual(Array.from({ length: STEPS }, (_, i) => `a ${i + 1}`));
    expect(responded.filter((r) => r.startsWith('b '))).toEqual(Array.from({ length: STEPS }, (_, i) => `b ${i + 1}`));
  });

  it('a run of the same runtime and attempt elsewhere appends nothing twice; a newer attempt fences both out', async () => {
    const sessionId = await claimedSession();
    const [first, twin] = [await runtimeRun(sessionId, counting[0]), await runtimeRun(sessionId, counting[1])];
    await first.append(reply('a', 1));
    // the twin's journal has not seen it: under the lock it catches up and builds nothing
    expect(await twin.append(reply('a', 1))).toBe(4);
    expect(await respondedOf(sessionId)).toEqual(['a 1']);
    // attempt 2 is claimed: attempt 1's appends never land, caught up or not
    await new EventStore(open.db).append({
      tenantId: 'tenant',
      streamId: sessionId,
      expectedVersion: 4,
      events: [{ type: 'execution.started@1', data: { ...TURN, attempt: 2, workerId: 'w2' } }],
    });
    await expect(first.append(reply('a', 2))).rejects.toBeInstanceOf(FencedOutError);
    await expect(twin.append(reply('b', 1))).rejects.toBeInstanceOf(FencedOutError);
    expect(await respondedOf(sessionId)).toEqual(['a 1']);
  });

  it("another tenant's writer never appends to the session, behind or not", async () => {
    const sessionId = await claimedSession();
    const store = new EventStore(counting[0].db);
    const events = await store.readStream(sessionId);
    const built = () => reply('a', 1)(new SessionJournal(events).get('e1')!);
    const request = { tenantId: 'other', streamId: sessionId, events: built(), rebuild: built };
    await expect(store.appendCatchingUp({ ...request, afterVersion: 3 })).rejects.toBeInstanceOf(StreamTenantMismatchError);
    await expect(store.appendCatchingUp({ ...request, afterVersion: 2 })).rejects.toBeInstanceOf(StreamTenantMismatchError);
    expect(await respondedOf(sessionId)).toEqual([]);
  });
});
