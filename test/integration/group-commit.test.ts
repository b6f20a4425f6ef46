import { randomUUID } from 'node:crypto';
import type { ExecutionJournal } from '../../libs/engine/journal/journal';
import { ExecutionRun } from '../../libs/engine/execution/fenced-append';
import { claimExecution } from '../../libs/engine/turn/claim';
import { loadSessionJournal } from '../../libs/engine/session/session-reads';
import { type TurnHarness, turnHarness } from '../../libs/engine/turn/test/harness';
import { asOpenDatabase, type CountedDatabase, countedDatabase, type CountingDatabase } from '../support/statement-counter';

/**
 * Issue 33: the runtimes of an inline stage share the turn job's journal; their appends queued
 * while one of them is being made go to the real PostgreSQL as ONE append (group commit): one
 * statement, no transaction, for all of them.
 */
describe('group commit of sibling appends (real PostgreSQL)', () => {
  let database: CountedDatabase;
  let counting: CountingDatabase;
  let h: TurnHarness;
  beforeAll(async () => {
    database = await countedDatabase();
    counting = database.counting;
    h = await turnHarness({ database: asOpenDatabase(counting) });
  });
  afterAll(async () => {
    await h.close();
    await database.drop();
  });

  const calling = (e: ExecutionJournal, runtimeId: string, attempt: number) => ({
    type: 'llm.calling@1' as const,
    data: {
      executionId: e.executionId,
      turnId: e.turnId,
      attempt,
      callId: randomUUID(),
      pluginId: runtimeId,
      runtimeId,
      provider: 'openai-chat',
      model: 'm',
      body: '{}',
    },
  });

  it('four siblings each recording a model call: two statements (the first, then the three queued behind it), no transaction', async () => {
    const session = await h.session();
    const job = await h.input(session);
    const journal = await loadSessionJournal(h.deps, job);
    const attempt = (await claimExecution(h.deps, job, journal, journal.get(job.executionId)!))!;
    const runs = ['a', 'b', 'c', 'd'].map(() => new ExecutionRun(h.deps.store, journal, job, attempt));
    let started = false;
    counting.reset();
    const first = runs[0].append((e) => {
      started = true;
      return [calling(e, 'a', attempt)];
    });
    while (!started) await Promise.resolve();
    await Promise.all([first, ...['b', 'c', 'd'].map((id, i) => runs[i + 1].append((e) => [calling(e, id, attempt)]))]);
    const appends = counting.statements.filter((s) => /^\s*with l as materialized/i.test(s));
    // was four: one per sibling
    expect(appends).toHaveLength(2);
    expect(counting.statements.filter((s) => /events_append_locked/i.test(s))).toEqual([]);
    expect(counting.transactions()).toBe(0);
    const events = await h.events(job.sessionId);
    expect(events.slice(-4).map((e) => (e.data as { runtimeId: string }).runtimeId)).toEqual(['a', 'b', 'c', 'd']);
    expect(events.slice(-4).map((e) => e.streamVersion)).toEqual([1, 2, 3, 4].map((n) => journal.version - 4 + n));
  });
});
