import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ProviderEmulator } from '../../libs/emulator';
import { EventStore, inlineProjections, openDatabase, type OpenDatabase } from '../../libs/events';
import { clientClosed, deltasOf, endsOf, postCancel, requestWith, SHORT_STORY, SLOW_MARK, sleep, storyScript } from '../support/cancel';
import { expectOneEndEach, raceCancelsAgainstCommits } from '../support/cancel-race';
import { dumpProjections } from '../support/projection-dump';
import { openEventStream } from '../support/sse-client';
import { startStack, type Stack } from '../support/stack';

const run = promisify(execFile);
const root = join(__dirname, '..', '..');

/**
 * Stop on PostgreSQL + BullMQ: the API and two workers are processes of their own; the cancel reaches
 * the worker streaming the turn through PostgreSQL's LISTEN/NOTIFY. The model is the emulator in this
 * process (a word every 100 ms), so it sees the worker's SDK close the connection.
 */
describe('stop a turn (PostgreSQL + BullMQ)', () => {
  let emulator: ProviderEmulator;
  let stack: Stack;
  let open: OpenDatabase;
  let store: EventStore;

  beforeAll(async () => {
    emulator = await new ProviderEmulator({ chunkDelayMs: 100, script: storyScript() }).start();
    stack = await startStack({ workers: 2, env: { COVEL_EMULATOR_URL: emulator.url } });
    open = await openDatabase({ kind: 'postgres', url: stack.databaseUrl });
    store = new EventStore(open.db, { inline: inlineProjections });
  }, 120_000);

  afterAll(async () => {
    await open?.close();
    await stack?.stop();
    await emulator?.stop();
  }, 60_000);

  const newSession = async () => (await stack.client.createSession({ worldId: 'emberback', plugins: ['narrator'] })).id;

  it('cancel 200 ms into a streamed 3 s turn: the worker aborts the call, nothing commits, the next input commits', async () => {
    const { client } = stack;
    const sessionId = await newSession();
    const stream = await openEventStream(client, sessionId);
    const input = `${SLOW_MARK} ring the bell`;
    const { executionId, turnId } = await client.submit(sessionId, input);
    await stream.until((e) => e.type === 'delta' && e.data.executionId === executionId);
    await sleep(200);
    const answer = await postCancel(stack.baseUrl, stack.apiKey, executionId);
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ executionId, turnId, status: 'cancelled', keepPartial: false });
    expect(await client.waitFor(executionId, 10_000)).toBe('cancelled');
    await stream.until((e) => e.type === 'cancelled' && e.data.executionId === executionId);
    expect(deltasOf(stream, executionId).length).toBeGreaterThan(0);

    const closed = await clientClosed(await requestWith(emulator.requests, input));
    expect(closed).toBeDefined();
    expect(closed!.eventsSent).toBeLessThan(closed!.events);
    expect(endsOf(await store.readStream(sessionId), executionId)).toEqual({ committed: 0, cancelled: 1 });

    const next = await client.submit(sessionId, 'Look around');
    expect(await client.waitFor(next.executionId, 30_000)).toBe('committed');
    const texts = (await client.messages(sessionId)).filter((m) => m.turnId !== turnId).map((m) => m.text);
    expect(texts.slice(-2)).toEqual(['Look around', SHORT_STORY]);
    stream.close();
  }, 120_000);

  it('20 cancels sent as their turn commits: each ends as exactly one of the two; a replay rebuilds the same read models', async () => {
    const outcomes = await raceCancelsAgainstCommits(
      { client: stack.client, baseUrl: stack.baseUrl, apiKey: stack.apiKey, newSession, readStream: (id) => store.readStream(id) },
      20,
      { firstStepMs: 128 },
    );
    expectOneEndEach(outcomes);

    // the views of cancelled turns (kept or not) are what a replay of the log rebuilds
    type Health = { projections: { lag: number }[] };
    for (let i = 0; i < 100; i++) {
      const health = (await (await fetch(`${stack.baseUrl}/health`)).json()) as Health;
      if (health.projections.every((p) => p.lag === 0)) break;
      await sleep(100);
    }
    const live = await dumpProjections(open.db);
    await run('npm', ['run', 'replay'], { cwd: root, env: { ...process.env, DATABASE_URL: stack.databaseUrl, REDIS_URL: '' } });
    const replayed = await dumpProjections(open.db);
    expect(replayed.executions).toEqual(live.executions);
    expect(replayed).toEqual(live);
  }, 300_000);
});
