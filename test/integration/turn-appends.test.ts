import { join } from 'node:path';
import { FencedOutError } from '../../libs/engine';
import { ClaimingRun } from '../../libs/engine/execution/claiming-run';
import { ExecutionRun } from '../../libs/engine/execution/fenced-append';
import { nextClaim } from '../../libs/engine/turn/claim';
import { TurnRunner } from '../../libs/engine/turn/turn-runner';
import { type TurnHarness, turnHarness } from '../../libs/engine/turn/test/harness';
import { loadSessionJournal } from '../../libs/engine/session/session-reads';
import { asOpenDatabase, type CountedDatabase, countedDatabase, type CountingDatabase } from '../support/statement-counter';
import { barrierPassed } from '../support/log-events';
import { turnContext } from '../support/turn-context';

/** What the runs below append: the barrier passed, for the execution `e` and its turn. */
const passed = (e: { executionId: string; turnId: string }, estimatedTokens = 10) => barrierPassed(e.executionId, { turnId: e.turnId, estimatedTokens });

/**
 * Issue 33: the appends (and so the transactions) of one narrator-only turn on the real PostgreSQL.
 * The turn job runs the stage's one runtime inline, and its claim (`execution.started@1`) is not an
 * append of its own: it goes in front of the attempt's first append (the model call's
 * `llm.calling@1`). Two appends a turn, each one statement (its inline projections' writes in it,
 * no transaction): the claim with the call, then the reply with the output and the commit. The
 * reads around them are single statements.
 */
describe('the appends of a narrator-only turn (real PostgreSQL)', () => {
  let database: CountedDatabase;
  let counting: CountingDatabase;
  let h: TurnHarness;
  let runner!: TurnRunner;
  beforeAll(async () => {
    database = await countedDatabase();
    counting = database.counting;
    h = await turnHarness({
      // the default narrator-only session's plugins: the narrator (a prompt.segment@1 handler) and the compaction provider
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

  it('two appends, each one statement and no transaction: the claim goes with the first model call, the reply with the output and the commit', async () => {
    const session = await h.session();
    const first = await h.input(session, 'first');
    expect(await runner.turn(first, turnContext())).toEqual({ kind: 'done' });
    const job = await h.input(session, 'second');
    const before = (await h.events(session.sessionId)).length;
    const appends = jest.spyOn(h.deps.store, 'append');
    const catchingUp = jest.spyOn(h.deps.store, 'appendCatchingUp');
    counting.reset();
    try {
      expect(await runner.turn(job, turnContext())).toEqual({ kind: 'done' });
      const statements = [...counting.statements];
      const appended = [...appends.mock.calls.map(([r]) => r.events), ...catchingUp.mock.calls.map(([r]) => r.events)];
      expect(appended.map((events) => events.map((e) => e.type))).toEqual([
        // the claim, the handler result the compaction barrier's estimate obtained (the model call reuses it), the call
        ['execution.started@1', 'extension.resolved@1', 'llm.calling@1'],
        ['llm.responded@1', 'runtime.output.produced@1', 'turn.committed@1'],
      ]);
      // each append is one statement, its inline projections' writes (the execution's row, the
      // committed messages) in it: no transaction at all (was two, BEGIN + append + the executions
      // update (+ the turn's messages) + COMMIT each; before that three, the claim's own)
      expect(counting.transactions()).toBe(0);
      expect(statements.filter((s) => /^(begin|commit)\b/i.test(s))).toEqual([]);
      expect(statements.filter((s) => /^with l as materialized/i.test(s))).toHaveLength(2);
      expect(statements.filter((s) => /^(update|insert into) "?(executions|turn_messages|history_watermarks)\b/i.test(s) || /^with base as/i.test(s))).toEqual(
        [],
      );
      // the log holds the turn as a rebuild reads it: claim, handler result, call, reply, output, commit, in that order
      const events = (await h.events(session.sessionId)).slice(before);
      expect(events.map((e) => e.type)).toEqual([
        'execution.started@1',
        'extension.resolved@1',
        'llm.calling@1',
        'llm.responded@1',
        'runtime.output.produced@1',
        'turn.committed@1',
      ]);
      expect(events[0].data).toEqual({
        executionId: job.executionId,
        turnId: job.turnId,
        attempt: 1,
        workerId: 'harness',
        generation: h.deps.catalog.generation,
      });
      expect(events[1].data).toMatchObject({ executionId: job.executionId, attempt: 1, point: 'prompt.segment@1', pluginId: 'narrator' });
      const execution = await h.deps.readModels.execution(job.tenantId, job.executionId);
      expect(execution).toMatchObject({ status: 'committed', attempts: 1 });
      const messages = await h.database.db
        .selectFrom('turn_messages')
        .select(['turn_id', 'ord'])
        .where('session_id', '=', session.sessionId)
        .orderBy('ord')
        .execute();
      expect(messages.filter((m) => m.turn_id === job.turnId).length).toBeGreaterThan(0);
    } finally {
      appends.mockRestore();
      catchingUp.mockRestore();
    }
  });

  it('two copies of a turn job claiming the same attempt: the claim that lands first fences the other out, one claim is stored', async () => {
    const session = await h.session();
    const job = await h.input(session, 'twice');
    const [mine, twin] = [await loadSessionJournal(h.deps, session), await loadSessionJournal(h.deps, session)];
    const runOf = (journal: typeof mine) => new ClaimingRun(h.deps.store, journal, job, nextClaim(h.deps, journal.get(job.executionId)!));
    const [a, b] = [runOf(mine), runOf(twin)];
    // a build that appends nothing carries no claim either
    expect(await a.append(() => [])).toBe(mine.version);
    expect(a.claim.landed).toBe(false);
    await a.append((e) => [passed(e)]);
    expect(a.claim.landed).toBe(true);
    // the twin's journal has not seen it: under the stream's lock it catches up, meets the claim, writes nothing
    await expect(b.append((e) => [passed(e)])).rejects.toBeInstanceOf(FencedOutError);
    await expect(b.land()).rejects.toBeInstanceOf(FencedOutError);
    const started = (await h.events(session.sessionId)).filter((e) => e.type === 'execution.started@1');
    expect(started.map((e) => e.data.attempt)).toEqual([1]);
    // the run that claimed goes on as any run of its attempt
    await a.append((e) => [passed(e)]);
    expect((await h.events(session.sessionId)).filter((e) => e.type === 'compaction.barrier-passed@1')).toHaveLength(2);
  });

  it('once the claim is stored, what a run made to carry carries (the barrier estimate’s results) goes with the attempt’s next append on the journal, any run’s', async () => {
    const session = await h.session();
    const job = await h.input(session, 'carried');
    const journal = await loadSessionJournal(h.deps, session);
    await new ClaimingRun(h.deps.store, journal, job, nextClaim(h.deps, journal.get(job.executionId)!)).land();
    // a run not made to carry (no append of the attempt is sure to follow on its journal): its caller appends them
    expect(new ExecutionRun(h.deps.store, journal, job, 1).carry({ results: [], build: (e) => [passed(e, 1)] })).toBe(false);
    const carrier = new ExecutionRun(h.deps.store, journal, job, 1, { carries: true });
    expect(carrier.carry({ results: [], build: (e) => [passed(e, 10)] })).toBe(true);
    expect(carrier.carry({ results: [], build: (e) => [passed(e, 11)] })).toBe(false); // one carry at a time
    const sibling = new ExecutionRun(h.deps.store, journal, job, 1);
    const before = journal.version;
    const appends = jest.spyOn(h.deps.store, 'appendCatchingUp');
    try {
      // a build that appends nothing carries nothing either
      expect(await sibling.append(() => [])).toBe(before);
      await sibling.append((e) => [passed(e, 20)]);
      await sibling.append((e) => [passed(e, 30)]);
      expect(appends.mock.calls.map(([r]) => r.events.map((e) => (e.data as { estimatedTokens: number }).estimatedTokens))).toEqual([[10, 20], [30]]);
    } finally {
      appends.mockRestore();
    }
    expect((await h.events(session.sessionId)).slice(before).map((e) => (e.data as { estimatedTokens?: number }).estimatedTokens)).toEqual([10, 20, 30]);
  });

  it('an attempt that fails before its first append stores its claim alone, without what it carried', async () => {
    const session = await h.session();
    const job = await h.input(session, 'fails');
    const journal = await loadSessionJournal(h.deps, session);
    const run = new ClaimingRun(h.deps.store, journal, job, nextClaim(h.deps, journal.get(job.executionId)!));
    expect(
      run.carry({
        results: [],
        build: () => {
          throw new Error('a carried check that would fail');
        },
      }),
    ).toBe(true);
    await run.land();
    expect(run.claim.landed).toBe(true);
    expect((await h.events(session.sessionId)).slice(-1).map((e) => [e.type, e.data])).toEqual([
      ['execution.started@1', expect.objectContaining({ executionId: job.executionId, attempt: 1 })],
    ]);
    // stored: the run goes on as any run of its attempt, and the claim is not stored twice
    expect(await run.land()).toBe(journal.version);
    expect((await h.events(session.sessionId)).filter((e) => e.type === 'execution.started@1')).toHaveLength(1);
  });
});
