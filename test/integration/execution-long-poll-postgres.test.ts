import type { INestApplication } from '@nestjs/common';
import { Client } from 'pg';
import { createApiApp } from '../../apps/api/create-api-app';
import { ExecutionWaits } from '../../apps/api/execution-waits';
import { PlayClient } from '../../apps/play/play-client';
import { ProviderEmulator } from '../../libs/emulator';
import { createEngine, type Engine, loadConfig } from '../../libs/engine';
import { EXECUTION_ENDED_CHANNEL, pgCounts } from '../../libs/events';
import { type GatedProvider, startGatedProvider } from '../support/gated-provider';
import { type Stack, startStack } from '../support/stack';
import { until } from '../support/until';

const quiet = { log: () => undefined, warn: () => undefined, error: () => undefined };

/** The read of an execution by its id (`ReadModels.execution`), as the statement counter labels it (its first 60 code points). */
const EXECUTION_READ = /^select \* from "executions" where "tenant_id" = \$n and "execu/;

/** Statements sent since `before` (this process's pools), by label. */
function statementsSince(before: ReturnType<typeof pgCounts>): Map<string, number> {
  const out = new Map<string, number>();
  for (const [label, n] of pgCounts().statements) if (n > (before.statements.get(label) ?? 0)) out.set(label, n - (before.statements.get(label) ?? 0));
  return out;
}

const executionReads = (since: Map<string, number>) => [...since].filter(([label]) => EXECUTION_READ.test(label)).reduce((n, [, c]) => n + c, 0);

/**
 * PostgreSQL + Redis: a worker process runs the turns; an API in this process (the same engine and
 * app as `npm run start:api`, here so its statements can be counted) takes the inputs and the
 * long-polls, beside the stack's own API process. A long-poll for an execution this API appended
 * while LISTENing is answered by the end's notification with no read of its own (issue 33); one it
 * cannot prove unended (ended already, appended elsewhere, the LISTEN lost since) is read, and
 * answered at once when it has ended.
 */
describe('GET /v1/executions/:id?waitMs (PostgreSQL + Redis)', () => {
  let emulator: ProviderEmulator;
  let gate: GatedProvider;
  let stack: Stack;
  let engine: Engine;
  let api: INestApplication;
  let player: PlayClient;
  let waits: ExecutionWaits;

  beforeAll(async () => {
    emulator = await new ProviderEmulator().start();
    gate = await startGatedProvider(emulator.url);
    stack = await startStack({ workers: 1, env: { COVEL_EMULATOR_URL: gate.url } });
    engine = await createEngine(loadConfig({ ...process.env, ...stack.env, PORT: '0' }), 'api', quiet);
    api = await createApiApp(engine, { logger: false });
    await api.listen(0, '127.0.0.1');
    player = new PlayClient((await api.getUrl()).replace('[::1]', '127.0.0.1'), stack.apiKey);
    waits = api.get(ExecutionWaits);
  }, 120_000);

  afterAll(async () => {
    await api?.close();
    await engine?.close();
    await stack?.stop();
    await gate?.close();
    await emulator?.stop();
  });

  /** A long-poll of 20 s on `client`: its status, and how long it took. */
  async function longPoll(client: PlayClient, executionId: string): Promise<{ status: string; ms: number }> {
    const started = Date.now();
    const view = await client.execution(executionId, 20_000);
    return { status: view.status, ms: Date.now() - started };
  }

  it('POST input + GET wait: the long-poll reads nothing, one statement fewer than a long-poll that must read', async () => {
    const { id } = await player.createSession({ worldId: 'emberback' });
    // a first turn: this API's key and limits known, its LISTEN up
    await player.playTurn(id, 'Look around');

    const hold = gate.holdNext(1);
    const before = pgCounts();
    const { executionId } = await player.submit(id, 'Walk to the river');
    const answer = player.execution(executionId, 20_000);
    await hold.reached;
    await until(() => waits.pending === 1, 'long-polling');
    hold.release();
    expect((await answer).status).toBe('committed');
    expect(executionReads(statementsSince(before))).toBe(0);

    // the same long-poll for an execution appended by another API process: read once, when it starts
    const elsewhere = gate.holdNext(1);
    const { executionId: other } = await stack.client.submit(id, 'Look back');
    const mark = pgCounts();
    const otherAnswer = player.execution(other, 20_000);
    await elsewhere.reached;
    await until(() => waits.pending === 1, 'long-polling');
    elsewhere.release();
    expect((await otherAnswer).status).toBe('committed');
    expect(executionReads(statementsSince(mark))).toBe(1);
  }, 90_000);

  it('a client that leaves its long-poll ends the wait at once (no timer nor listener kept for 20 s); the turn still commits', async () => {
    const { id } = await player.createSession({ worldId: 'emberback' });
    const hold = gate.holdNext(1);
    const { executionId } = await player.submit(id, 'Look around');
    await hold.reached;
    const leaving = new AbortController();
    const url = `${(await api.getUrl()).replace('[::1]', '127.0.0.1')}/v1/executions/${executionId}?waitMs=20000`;
    const poll = fetch(url, { headers: { authorization: `Bearer ${stack.apiKey}` }, signal: leaving.signal }).catch((error: unknown) => error);
    await until(() => waits.pending === 1, 'long-polling');
    leaving.abort();
    await expect(poll).resolves.toMatchObject({ name: 'AbortError' });
    await until(() => waits.pending === 0, 'the wait ended when its client left');
    hold.release();
    expect(await stack.client.waitFor(executionId, 60_000)).toBe('committed');
  }, 90_000);

  it('a long-poll after the end, one on another API process, and one after the LISTEN connection dropped are answered at once', async () => {
    const { id } = await player.createSession({ worldId: 'emberback' });
    // ended before the long-poll: heard by this API, which then reads
    const { executionId: ended } = await player.submit(id, 'Look around');
    expect(await stack.client.waitFor(ended, 60_000)).toBe('committed');
    const afterEnd = await longPoll(player, ended);
    expect(afterEnd.status).toBe('committed');
    expect(afterEnd.ms).toBeLessThan(10_000);

    // appended here, long-polled on the stack's API process
    const { executionId: another } = await player.submit(id, 'Walk to the river');
    const onOther = await longPoll(stack.client, another);
    expect(onOther.status).toBe('committed');
    expect(await longPoll(player, another)).toMatchObject({ status: 'committed' });

    // appended here, then this API's LISTEN connection killed: the end committed while nobody
    // listened (held until then), the connection back, and the long-poll must read it
    const hold = gate.holdNext(1);
    const { executionId: dropped } = await player.submit(id, 'Look back');
    await hold.reached;
    const admin = new Client({ connectionString: stack.adminUrl });
    await admin.connect();
    try {
      // every process's LISTEN for ends (this API's among them); each listens again on its own
      await admin.query(`select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and query = $1`, [
        `listen "${EXECUTION_ENDED_CHANNEL}"`,
      ]);
    } finally {
      await admin.end();
    }
    await until(() => waits.listenState !== 'listening', 'down');
    hold.release();
    expect(await stack.client.waitFor(dropped, 60_000)).toBe('committed');
    await until(() => waits.listenState === 'listening', 'listening again');
    const afterDrop = await longPoll(player, dropped);
    expect(afterDrop.status).toBe('committed');
    expect(afterDrop.ms).toBeLessThan(10_000);
  }, 120_000);
});
