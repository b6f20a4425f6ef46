import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PlayClient } from '../../apps/play/play-client';
import { EventStore, openDatabase } from '../../libs/events';
import { freePort, type ManagedProcess, startApp } from '../support/stack';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * `npm start` (the embedded default: PGlite, in-process queue) killed with SIGKILL mid-turn and
 * started again: the interrupted turn resumes at start-up, before the API serves, and commits once.
 * The sweeper's idle threshold is set far out so only the start-up resume can explain the commit;
 * the 30 s bound is a hang guard (before the fix it took a sweeper threshold: 57–68 s).
 */
describe('embedded default: a turn cut by kill -9 resumes at start-up', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'covel-embedded-crash-'));
  let server: ManagedProcess | null = null;
  afterAll(async () => {
    await server?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }, 30_000);

  const start = async (port: number) =>
    startApp(
      'npm start',
      'apps/main.ts',
      {
        DATABASE_URL: '',
        REDIS_URL: '',
        COVEL_EMULATOR_URL: '',
        COVEL_DATA_DIR: dataDir,
        PORT: String(port),
        COVEL_EMULATOR_DELAY_MS: '3000',
        COVEL_SWEEP_STALLED_MS: '600000',
        // a real first start, as a user's: initdb and every migration on disk, not the tests' migrated template
        COVEL_PGLITE_TEMPLATE: '',
      },
      /Covel engine ready/,
    );

  it('commits right after the restart, exactly once', async () => {
    const port = await freePort();
    server = await start(port);
    const apiKey = readFileSync(join(dataDir, 'dev-api-key'), 'utf8').trim();
    const client = new PlayClient(`http://127.0.0.1:${port}`, apiKey);
    const { id } = await client.createSession();
    const { executionId, turnId } = await client.submit(id, 'Cross the bridge 🌉');
    for (let i = 0; i < 200 && (await client.execution(executionId)).status !== 'running'; i++) await sleep(50);
    await sleep(500); // the model call is out (3 s emulator delay)
    expect((await client.execution(executionId)).status).toBe('running');
    server.child.kill('SIGKILL');
    await server.exited;

    const restartedAt = Date.now();
    server = await start(port);
    const readyMs = Date.now() - restartedAt;
    await client.waitFor(executionId, 30_000);
    expect(server.output()).toMatch(/resumed 1 pending execution\b/);
    console.log(
      `embedded kill -9: restart ready in ${readyMs} ms; turn committed ${Date.now() - restartedAt} ms after the restart began (3 s emulator delay included)`,
    );
    expect((await client.messages(id)).map((m) => [m.turnId, m.role])).toEqual([
      [turnId, 'user'],
      [turnId, 'assistant'],
    ]);
    await server.stop();
    server = null;

    const open = await openDatabase({ kind: 'pglite', dataDir: join(dataDir, 'pglite') });
    try {
      const types = (await new EventStore(open.db).readStream(id)).map((e) => e.type);
      expect(types.filter((t) => t === 'execution.started@1')).toHaveLength(2);
      expect(types.filter((t) => t === 'turn.committed@1')).toHaveLength(1);
    } finally {
      await open.close();
    }
  }, 360_000);
});
