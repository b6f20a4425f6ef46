import { sql } from 'kysely';
import type { TurnRunner } from '../../libs/engine/turn/turn-runner';
import { runnerNotingRuntimeJobs, STAGED_PLUGINS, type TurnHarness, turnHarness } from '../../libs/engine/turn/test/harness';
import type { RuntimeJob } from '../../libs/engine/queue';
import { asOpenDatabase, type CountedDatabase, countedDatabase, type CountingDatabase } from '../support/statement-counter';
import { turnContext } from '../support/turn-context';

/**
 * Issue 33: a stage of several runtimes (the fixture's pre-turn: mood and scene) runs inline in its
 * turn job, on the real PostgreSQL. Its runtimes share the turn job's journal: their appends go one
 * after another in the process, each at the version the one before left, so none of them takes the
 * locked path (`events_append_locked`, the path of an append that others came before) and none is
 * a transaction; no runtime job is added and no runtime reads the log or the history on its own,
 * and the steps after a stage go on from the journal its appends kept current (no read of their own).
 */
describe('the runtimes of a stage run inline in the turn job (real PostgreSQL)', () => {
  let database: CountedDatabase;
  let counting: CountingDatabase;
  let h: TurnHarness;
  let runner!: TurnRunner;
  const runtimeJobs: RuntimeJob[] = [];
  beforeAll(async () => {
    database = await countedDatabase();
    counting = database.counting;
    h = await turnHarness({
      pluginsDir: STAGED_PLUGINS,
      handlers: runnerNotingRuntimeJobs(runtimeJobs, (made) => (runner = made)),
      database: asOpenDatabase(counting),
    });
  });
  afterAll(async () => {
    await h.close();
    await database.drop();
  });

  const count = (pattern: RegExp) => counting.statements.filter((s) => pattern.test(s)).length;

  it('one run of the turn job: no runtime job, no locked append, no transaction; one claim, one output each, one commit', async () => {
    const session = await h.session();
    const job = await h.input(session, 'Cross the bridge');
    counting.reset();
    expect(await runner.turn(job, turnContext())).toEqual({ kind: 'done' });
    const statements = [...counting.statements];
    const events = await h.events(session.sessionId);
    expect(events.filter((e) => e.type === 'runtime.output.produced@1').map((e) => (e.data as { runtimeId: string }).runtimeId)).toEqual(
      expect.arrayContaining(['mood', 'scene', 'narrator', 'recap']),
    );
    expect(events.filter((e) => e.type === 'runtime.output.produced@1')).toHaveLength(4);
    expect(events.filter((e) => e.type === 'execution.started@1')).toHaveLength(1);
    expect(events.filter((e) => e.type === 'turn.committed@1')).toHaveLength(1);
    expect(runtimeJobs).toEqual([]);
    counting.statements.splice(0, counting.statements.length, ...statements);
    // the siblings never contend: no append takes the locked path, none is a transaction
    expect(count(/events_append_locked/i)).toBe(0);
    expect(counting.transactions()).toBe(0);
    // the session's log is read once a turn (by its first step), never once a runtime nor once a stage: the
    // steps after a stage go on from the journal its appends kept current (they read three times before)
    expect(count(/min\(submitted_version\)/i)).toBe(1);
    // and the history the runtimes use comes with those reads (no read of its own)
    const reads = counting.statements.filter(
      (s) => /^\s*(with|select)\b/i.test(s) && !/events_append_locked|\binsert\s+into\b|\bupdate\s+\w+\s+set\b/i.test(s),
    );
    expect(reads.filter((s) => /compacted_through/.test(s) && !/min\(submitted_version\)/.test(s))).toEqual([]);
    // the pre-turn's two model calls are recorded by ONE append (the stage gathers its runtimes' first
    // appends, `gatherStage`): was two, the first alone and the other behind it
    const { rows } = await sql<{ runtime: string; xid: string }>`
      select data->>'runtimeId' as runtime, transaction_id::text as xid from events
      where stream_id = ${session.sessionId} and type = 'llm.calling@1' and data->>'runtimeId' in ('mood', 'scene')`.execute(counting.db);
    expect(rows.map((r) => r.runtime).sort()).toEqual(['mood', 'scene']);
    expect(new Set(rows.map((r) => r.xid)).size).toBe(1);
  });
});
