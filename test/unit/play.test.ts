import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../support/stack';

const root = join(__dirname, '..', '..');

/** README's first command: `npm start` on the embedded default, then `npm run play` (which finds it whatever its PORT), three turns. */
describe('npm start + npm run play', () => {
  it('plays three turns with no server installed', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'covel-play-'));
    const port = String(await freePort());
    const { DATABASE_URL, REDIS_URL, OPENAI_API_KEY, ...env } = process.env;
    const { PORT, COVEL_URL, ...unset } = env;
    const common = { ...unset, COVEL_DATA_DIR: dataDir };
    writeFileSync(join(dataDir, 'engine-url'), 'http://127.0.0.1:9\n'); // a stale one, from an engine long gone
    const engine = spawn('npm', ['start'], { cwd: root, env: { ...common, PORT: port }, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let engineOut = '';
    engine.stdout.on('data', (d) => (engineOut += d));
    engine.stderr.on('data', (d) => (engineOut += d));
    try {
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`engine not ready:\n${engineOut}`)), 60_000);
        engine.stdout.on('data', () => {
          if (/Covel engine ready at/.test(engineOut)) {
            clearTimeout(timer);
            resolve();
          }
        });
        engine.once('exit', (code) => reject(new Error(`engine exited ${code}:\n${engineOut}`)));
      });
      expect(engineOut).toMatch(/dev key:\s+cvl_/);
      expect(engineOut).toContain(`http://127.0.0.1:${port}`);
      expect(readFileSync(join(dataDir, 'engine-url'), 'utf8')).toBe(`http://127.0.0.1:${port}\n`);

      // no PORT, no COVEL_URL: the player reads the URL npm start wrote next to its dev key
      const play = spawn('npm', ['run', 'play'], { cwd: root, env: common, stdio: ['pipe', 'pipe', 'pipe'] });
      let out = '';
      play.stdout.on('data', (d) => (out += d));
      play.stderr.on('data', (d) => (out += d));
      const exited = new Promise<number | null>((resolve) => play.once('exit', resolve));
      play.stdin.write('Look around\nWalk to the river\nCall out to the ferrywoman\n/quit\n');
      expect(await exited).toBe(0);
      expect(out).toMatch(/you look around/);
      expect(out).toMatch(/you walk to the river/);
      expect(out).toMatch(/you call out to the ferrywoman/);
      expect(out).not.toMatch(/^! /m);

      // stopped, the engine takes its URL away: a later npm run play does not find a closed engine
      const engineExited = new Promise((r) => engine.once('exit', r));
      process.kill(-engine.pid!, 'SIGTERM');
      await engineExited;
      expect(existsSync(join(dataDir, 'engine-url'))).toBe(false);
    } finally {
      if (engine.exitCode === null && engine.signalCode === null) {
        process.kill(-engine.pid!, 'SIGTERM');
        await new Promise((r) => engine.once('exit', r));
      }
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 120_000);
});
