import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const root = join(__dirname, '..', '..');

/** `npm run bench` as a process: its exit code and what it printed. */
function runBench(args: string[], env: Record<string, string>): Promise<{ code: number | null; out: string }> {
  const child = spawn('npm', ['run', 'bench', '--silent', '--', ...args], { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (out += d));
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, out })));
}

describe('npm run bench enforces its verdicts', () => {
  let dir: string;
  beforeAll(() => (dir = mkdtempSync(join(tmpdir(), 'covel-bench-exit-'))));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  // two Emberback turns: the verdict is on the share from turn 2 on, under the 90 % target today (88.9 %);
  // when the layout reaches it, this test needs another way to miss a target
  const env = () => ({ BENCH_ONLY: 'emberback', BENCH_EMBERBACK_TURNS: '2', BENCH_RESULTS_DIR: dir });

  it('a missed target exits 1 after writing its results; --no-verdict exits 0', async () => {
    const missed = await runBench([], env());
    expect(missed.out).toMatch(/MISSED emberback: emulated cache-read share from turn 2 on [\d.]+% >= 90%/);
    expect(missed.out).toMatch(/ok {5}emberback: every turn's audit byte-identical/);
    expect(missed.code).toBe(1);
    expect(existsSync(join(dir, 'emberback.json'))).toBe(true);
    const skipped = await runBench(['--no-verdict'], env());
    expect(skipped.out).toContain('MISSED emberback');
    expect(skipped.code).toBe(0);
  }, 180_000);
});
