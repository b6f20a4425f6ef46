import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { openDatabase, type OpenDatabase } from '../../libs/events';
import { dumpProjections } from '../support/projection-dump';
import { type Stack, startStack } from '../support/stack';

const run = promisify(execFile);
const root = join(__dirname, '..', '..');

type Health = { projections: { kind: string; name: string; state: string; lag: number }[] };

/**
 * Real PostgreSQL + Redis, an API and two workers: `npm run replay -- --async` rebuilds trace_events
 * and prefix_reports while players submit turns. Turns keep committing during the replay, and
 * afterwards the tables equal a fresh build from the log.
 */
describe('replay of the async projections while turns run (PostgreSQL + BullMQ)', () => {
  let stack: Stack;
  let open: OpenDatabase;
  beforeAll(async () => {
    stack = await startStack({ workers: 2 });
    open = await openDatabase({ kind: 'postgres', url: stack.adminUrl });
  }, 120_000);
  afterAll(async () => {
    await open?.close();
    await stack?.stop();
  });

  const asyncCaughtUp = async () => {
    for (let i = 0; i < 300; i++) {
      const h = (await (await fetch(`${stack.baseUrl}/health`)).json()) as Health;
      const async = h.projections.filter((p) => p.kind === 'async');
      if (async.length === 3 && async.every((p) => p.state === 'running' && p.lag === 0)) return; // trace_events, prefix_reports, usage
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error('the async projections did not catch up');
  };
  const replay = () => run('npm', ['run', 'replay', '--', '--async'], { cwd: root, env: { ...process.env, DATABASE_URL: stack.databaseUrl, REDIS_URL: '' } });
  const asyncTables = async () => {
    const { trace_events, prefix_reports, usage_daily, usage_calls } = await dumpProjections(open.db);
    return { trace_events, prefix_reports, usage_daily, usage_calls };
  };

  it('turns keep committing during the replay, and the rebuilt tables equal a fresh build', async () => {
    const { client } = stack;
    const sessions = await Promise.all(Array.from({ length: 6 }, () => client.createSession()));
    // a first round so there is a log to replay
    await Promise.all(sessions.map(async (s) => client.waitFor((await client.submit(s.id, 'open the door')).executionId, 60_000)));

    // players: each waits for its turn, then posts again, until the replay is over (and a little after)
    const committedAt: number[] = [];
    let replayDone = false;
    const players = sessions.map(async (s, i) => {
      for (let t = 0; !replayDone || t < 2; t++) {
        await client.waitFor((await client.submit(s.id, `player ${i} move ${t}`)).executionId, 60_000);
        committedAt.push(Date.now());
      }
    });
    const replayStarted = Date.now();
    const { stdout } = await replay().finally(() => (replayDone = true));
    const replayEnded = Date.now();
    await Promise.all(players);

    expect(stdout).toMatch(/trace_events shard \d+: \d+ events, done/);
    expect(stdout).toMatch(/prefix_reports shard \d+: \d+ events, done/);
    // turns committed while the replay ran
    expect(committedAt.filter((t) => t > replayStarted && t < replayEnded).length).toBeGreaterThan(0);

    // every turn is in the views: the messages, and a trace and a report for each call
    await asyncCaughtUp();
    const live = await asyncTables();
    const calls = await open.db.selectFrom('events').select('global_position').where('type', '=', 'llm.calling@1').execute();
    expect(live.prefix_reports).toHaveLength(calls.length);
    expect(live.trace_events.filter((r) => (r as { type: string }).type === 'llm.calling@1')).toHaveLength(calls.length);

    // a fresh build from the log (nothing running now) gives the same rows
    await replay();
    expect(await asyncTables()).toEqual(live);
  }, 300_000);
});
