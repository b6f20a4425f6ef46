import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PlayClient } from '../../apps/play/play-client';
import { ProviderEmulator } from '../../libs/emulator';
import { EventStore, lockFileFor, openDatabase, type StoredEvent } from '../../libs/events';
import { clientClosed, LONG_STORY, requestWith, SLOW_MARK, sleep, storyScript } from '../support/cancel';
import { type NpmStartServer, npmStart } from '../support/npm-start';
import { freePort } from '../support/stack';

/** What the log holds of an execution: its commits, failures, cancels and recorded model replies. */
function recorded(events: readonly StoredEvent[], executionId: string) {
  const mine = events.filter((e) => (e.data as { executionId?: string }).executionId === executionId);
  const count = (type: string) => mine.filter((e) => e.type === type).length;
  return {
    committed: count('turn.committed@1'),
    failed: count('execution.failed@1'),
    cancelled: count('execution.cancelled@1'),
    responded: count('llm.responded@1'),
  };
}

/** Whether any process of the group still runs (npm and the engine it started: `npm start` runs in its own group). */
function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * Issue 31 item 1: SIGTERM (or Ctrl-C) to `npm start` is a graceful stop. The signal goes to npm
 * itself, as a terminal or a container sends it; npm forwards it to the engine (the script `exec`s
 * node, so no shell stands between them). The engine stops taking jobs, lets the running turn end
 * within `COVEL_SHUTDOWN_GRACE_MS` or hands it back, closes PGlite, releases the data directory's
 * lock and exits 0; the turn commits exactly once, in this run or at the next start. The model is
 * the emulator over HTTP writing the long story a word every 100 ms (~3 s).
 */
describe('stopping npm start (embedded default)', () => {
  let emulator: ProviderEmulator;
  let dataDir: string;
  let server: NpmStartServer | null = null;

  beforeAll(async () => {
    emulator = await new ProviderEmulator({ chunkDelayMs: 100, script: storyScript() }).start();
  });
  afterAll(async () => {
    await emulator?.stop();
  });
  beforeEach(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'covel-stop-'));
  });
  afterEach(async () => {
    if (server && groupAlive(server.child.pid!)) {
      process.kill(-server.child.pid!, 'SIGKILL');
      await server.exited;
    }
    server = null;
    rmSync(dataDir, { recursive: true, force: true });
  });

  const start = async (extra: Record<string, string> = {}) => {
    const { DATABASE_URL, REDIS_URL, OPENAI_API_KEY, ANTHROPIC_API_KEY, GEMINI_API_KEY, ...inherited } = process.env;
    const port = String(await freePort());
    server = await npmStart({ ...inherited, COVEL_DATA_DIR: dataDir, PORT: port, COVEL_EMULATOR_URL: emulator.url, ...extra });
    const key = readFileSync(join(dataDir, 'dev-api-key'), 'utf8').trim();
    return { server, client: new PlayClient(`http://127.0.0.1:${port}`, key) };
  };

  /** Sends `signal` to npm (or, with `group`, to npm's whole process group, as a terminal's Ctrl-C does); its exit code and the stop's duration. */
  const stop = async (running: NpmStartServer, signal: NodeJS.Signals, options: { group?: boolean } = {}) => {
    const started = Date.now();
    process.kill(options.group ? -running.child.pid! : running.child.pid!, signal);
    const code = await running.exited;
    const ms = Date.now() - started;
    console.log(`npm start stopped by ${signal}${options.group ? ' to its group' : ''} in ${ms} ms, exit ${String(code)}`);
    expect(groupAlive(running.child.pid!)).toBe(false); // the engine is gone too, not left running without npm
    return { code, ms };
  };

  /** A turn whose model call is streaming (its request at the emulator, ~300 ms of its ~3 s reply sent). */
  const turnMidStream = async (client: PlayClient) => {
    const { id: sessionId } = await client.createSession({ worldId: 'emberback', plugins: ['narrator'] });
    const input = `${SLOW_MARK} ring the bell ${sessionId}`;
    const { executionId, turnId } = await client.submit(sessionId, input);
    const call = await requestWith(emulator.requests, input);
    await sleep(300);
    return { sessionId, executionId, turnId, call };
  };

  /** The sessions' logs, read from the data directory once no engine holds it (an open would be refused while one does). */
  const logsOf = async (...sessionIds: string[]) => {
    const database = await openDatabase({ kind: 'pglite', dataDir: join(dataDir, 'pglite') });
    try {
      const store = new EventStore(database.db);
      return await Promise.all(sessionIds.map((id) => store.readStream(id)));
    } finally {
      await database.close();
    }
  };

  const released = () => {
    expect(existsSync(lockFileFor(join(dataDir, 'pglite')))).toBe(false);
    expect(existsSync(join(dataDir, 'engine-url'))).toBe(false);
  };

  // Each test stops two engines on one data directory: a start costs about 3 s of CPU, and the second
  // start, which commits the turn the first left, is also the engine the second stop's case is played on.

  it('past the grace period the turn is handed back: its call aborted, nothing recorded, exit 0; the next start commits it once; there SIGTERM to npm mid-turn lets the turn end within the grace period: it commits once, exit 0, the lock released', async () => {
    const first = await start({ COVEL_SHUTDOWN_GRACE_MS: '300' });
    const handedBack = await turnMidStream(first.client);
    const { code } = await stop(first.server, 'SIGTERM');
    expect(code).toBe(0);
    released();
    expect(await clientClosed(handedBack.call, 5_000)).toBeDefined(); // the model call was aborted, not left to finish
    const [before] = await logsOf(handedBack.sessionId);
    expect(recorded(before, handedBack.executionId)).toEqual({ committed: 0, failed: 0, cancelled: 0, responded: 0 });

    const second = await start();
    expect(await second.client.waitFor(handedBack.executionId, 60_000)).toBe('committed');
    const story = (await second.client.messages(handedBack.sessionId))
      .filter((m) => m.turnId === handedBack.turnId && m.role === 'assistant')
      .map((m) => m.text);
    expect(story).toEqual([LONG_STORY]);

    // SIGTERM to npm mid-turn (the default grace period): the turn ends, the reply read to its end
    const running = await turnMidStream(second.client);
    expect((await stop(second.server, 'SIGTERM')).code).toBe(0);
    released();
    expect(second.server.output()).toContain('SIGTERM: stopping');
    expect(second.server.output()).toMatch(/stopped in \d+ ms/);
    expect(running.call.clientClosed).toBeUndefined(); // the reply was read to its end
    const [handedBackLog, runningLog] = await logsOf(handedBack.sessionId, running.sessionId);
    expect(recorded(handedBackLog, handedBack.executionId)).toEqual({ committed: 1, failed: 0, cancelled: 0, responded: 1 });
    expect(recorded(runningLog, running.executionId)).toEqual({ committed: 1, failed: 0, cancelled: 0, responded: 1 });
  }, 240_000);

  it('a second SIGTERM while stopping exits at once (143), before the grace period ends; the turn commits at the next start; there Ctrl-C in a terminal (SIGINT to the whole group: npm forwards it, the engine gets it twice) is one graceful stop', async () => {
    const first = await start({ COVEL_SHUTDOWN_GRACE_MS: '120000' });
    const cut = await turnMidStream(first.client);
    process.kill(first.server.child.pid!, 'SIGTERM');
    await sleep(1_100); // past the window in which a repeated signal counts as the same stop
    const { code, ms } = await stop(first.server, 'SIGTERM');
    expect(code).toBe(143);
    expect(ms).toBeLessThan(30_000); // far under the 120 s grace period: it did not wait for it
    expect(first.server.output()).toContain('SIGTERM while stopping: exiting now');

    const second = await start();
    expect(await second.client.waitFor(cut.executionId, 60_000)).toBe('committed');

    // Ctrl-C mid-turn: one graceful stop, not a repeated signal
    const running = await turnMidStream(second.client);
    expect((await stop(second.server, 'SIGINT', { group: true })).code).toBe(0);
    released();
    expect(second.server.output()).not.toContain('while stopping: exiting now');
    const [cutLog, runningLog] = await logsOf(cut.sessionId, running.sessionId);
    expect(recorded(cutLog, cut.executionId).committed).toBe(1);
    expect(recorded(runningLog, running.executionId)).toEqual({ committed: 1, failed: 0, cancelled: 0, responded: 1 });
  }, 240_000);
});
