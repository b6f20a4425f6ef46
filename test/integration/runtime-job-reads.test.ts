import { join } from 'node:path';
import { keepHistory } from '../../libs/engine/history/history-handoff';
import { historyReadLimit } from '../../libs/engine/execution/deps';
import { rebuildRequests } from '../../libs/engine/audit/request-rebuild';
import { TurnRunner } from '../../libs/engine/turn/turn-runner';
import { turnStep } from '../../libs/engine/turn/turn-step';
import { type TurnHarness, turnHarness } from '../../libs/engine/turn/test/harness';
import type { RuntimeJob } from '../../libs/engine/queue';
import { asOpenDatabase, type CountedDatabase, countedDatabase, type CountingDatabase } from '../support/statement-counter';
import { turnContext } from '../support/turn-context';

/**
 * Issue 33: the reads of a runtime run as a child job (the post-turn stage of an Emberback turn runs
 * nine) on the real PostgreSQL. Its read of the log brings the shared history view in the same
 * statement and snapshot (it was a statement of its own per runtime job); the request it builds is
 * the one a rebuild from the events gives.
 */
describe('a runtime job’s reads (real PostgreSQL)', () => {
  let database: CountedDatabase;
  let counting: CountingDatabase;
  let h: TurnHarness;
  let runner!: TurnRunner;
  beforeAll(async () => {
    database = await countedDatabase();
    counting = database.counting;
    h = await turnHarness({
      pluginsDir: join(__dirname, '..', '..', 'plugins'),
      pluginFilter: (p) => ['narrator', 'history-compaction'].includes(p.manifest.id),
      handlers: (deps) => (runner = new TurnRunner(deps)),
      database: asOpenDatabase(counting),
    });
  });
  afterAll(async () => {
    await h.close();
    await database.drop();
  });

  /** A session with one committed turn, its second input's turn job stepped (not inline): the runtime job it waits for. */
  async function secondTurnChild(): Promise<{ session: { tenantId: string; sessionId: string }; child: RuntimeJob }> {
    const session = await h.session();
    expect(await runner.turn(await h.input(session, 'Ask the ferryman 👨‍👩‍👧 about the tide'), turnContext())).toEqual({ kind: 'done' });
    const job = await h.input(session, 'second');
    const step = await turnStep(h.deps, job, turnContext());
    if (step.kind !== 'awaitChildren') throw new Error(`expected a stage to wait for, got ${step.kind}`);
    expect(step.children).toHaveLength(1);
    return { session, child: step.children[0] };
  }

  /** The statements that only read (an append's, a projection's writes left out). */
  const reads = (statements: readonly string[]) =>
    statements.filter((s) => /^\s*(with|select)\b/i.test(s) && !/events_append_locked|\binsert\s+into\b|\bupdate\s+\w+\s+set\b/i.test(s));

  it('the journal and the history view in one statement, the request as a rebuild gives it', async () => {
    const { session, child } = await secondTurnChild();
    // this process keeps a history of the execution, from an earlier version (an earlier stage's barrier): stale, not taken, no read of its own
    keepHistory(
      { tenantId: session.tenantId, sessionId: session.sessionId, executionId: child.executionId, streamVersion: 1 },
      { messages: [], summaries: [], scanTail: [], stats: { total: 0, compacted: 0, uncompacted: 0, turns: 0 }, images: [] },
    );
    counting.reset();
    expect(await runner.runtime(child, { attemptsMade: 0, maxAttempts: 3 })).toEqual({ kind: 'done' });
    const history = reads(counting.statements).filter((s) => /compacted_through/.test(s));
    // one read of the history view, and it is the journal's read (was: the journal's, then the view's)
    expect(history).toHaveLength(1);
    expect(history[0]).toMatch(/min\(submitted_version\)/);
    expect(reads(counting.statements).filter((s) => /turn_messages/.test(s))).toHaveLength(1);
    expect((await h.deps.readModels.execution(child.tenantId, child.executionId))?.status).toBe('committed');
    // the call carried the first turn's story, and is the request a rebuild from the events gives
    const events = await h.events(session.sessionId);
    const calls = events.filter((e) => e.type === 'llm.calling@1');
    expect(calls).toHaveLength(2);
    expect(JSON.stringify(calls[1].data)).toContain('ferryman');
    const rebuilt = await rebuildRequests(events, h.deps.catalog, h.deps.providers, h.deps.worlds, { historyReadLimit: historyReadLimit(h.deps) });
    expect(rebuilt.map((c) => c.identical)).toEqual([true, true]);
  });
});
