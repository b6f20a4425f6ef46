import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { PlayClient } from '../../apps/play/play-client';
import { type NpmStartServer, npmStart } from '../support/npm-start';
import { freePort } from '../support/stack';

const root = join(__dirname, '..', '..');
const run = promisify(execFile);

/** Runs an npm script to its end; never throws, returns its exit code and output. */
async function npmRun(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number; output: string }> {
  try {
    const { stdout, stderr } = await run('npm', ['run', ...args], { cwd: root, env });
    return { code: 0, output: stdout + stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, output: e.stdout + e.stderr };
  }
}

/** Issue 8 item 2: a second opener of the served data directory is refused; nothing committed is lost. */
describe('npm start holds its data directory', () => {
  it('refuses tools on the served directory, keeps serving, and keeps committed turns across a kill -9', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'covel-lock-e2e-'));
    const port = String(await freePort());
    const { DATABASE_URL, REDIS_URL, OPENAI_API_KEY, ANTHROPIC_API_KEY, GEMINI_API_KEY, COVEL_EMULATOR_URL, ...inherited } = process.env;
    const env = { ...inherited, COVEL_DATA_DIR: dataDir, PORT: port };
    let server: NpmStartServer | null = await npmStart(env);
    try {
      const key = readFileSync(join(dataDir, 'dev-api-key'), 'utf8').trim();
      const client = new PlayClient(`http://127.0.0.1:${port}`, key);
      const { id: sessionId } = await client.createSession();
      const first = await client.submit(sessionId, 'Light the lantern');
      await client.waitFor(first.executionId, 30_000);

      for (const args of [['tenant:create', '--', 'x'], ['prompt:prefix', '--', dataDir], ['replay']]) {
        const { code, output } = await npmRun(args, env);
        expect({ args, code }).toEqual({ args, code: 1 });
        expect(output).toContain(`${join(dataDir, 'pglite')} is in use by process `);
        expect(output).toContain("use the running server's HTTP API");
      }

      // still serving, on an intact database
      const second = await client.submit(sessionId, 'Open the door');
      await client.waitFor(second.executionId, 30_000);

      process.kill(-server.child.pid!, 'SIGKILL');
      await server.exited;
      server = await npmStart(env); // the dead server's lock is stale: taken over, no cleanup needed
      const messages = await client.messages(sessionId);
      expect(messages.filter((m) => m.role === 'user').map((m) => m.text)).toEqual(['Light the lantern', 'Open the door']);
      expect(messages.filter((m) => m.turnId === first.turnId && m.role === 'assistant').length).toBeGreaterThan(0);
    } finally {
      if (server) {
        process.kill(-server.child.pid!, 'SIGTERM');
        await server.exited;
      }
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 180_000);
});
