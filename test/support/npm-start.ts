import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';

const root = join(__dirname, '..', '..');

/** An engine started as the README's `npm start` (plain Node, its own process group). */
export interface NpmStartServer {
  child: ChildProcess;
  /** What it printed so far (stdout and stderr). */
  output: () => string;
  exited: Promise<unknown>;
}

/** `npm start` with `env`, in its own process group; resolves when it prints its ready line, rejects if it exits first or is not ready in 60 s. */
export async function npmStart(env: NodeJS.ProcessEnv): Promise<NpmStartServer> {
  const child = spawn('npm', ['start'], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  const exited = new Promise((resolve) => child.once('exit', resolve));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`engine not ready:\n${out}`)), 60_000);
    child.stdout!.on('data', () => /Covel engine ready at/.test(out) && (clearTimeout(timer), resolve()));
    void exited.then((code) => (clearTimeout(timer), reject(new Error(`engine exited ${code}:\n${out}`))));
  });
  return { child, output: () => out, exited };
}

/**
 * `npm run <script>` (`start:api`, `start:worker`) with `env` over this process's, in its own process
 * group, as an operator's supervisor runs it; resolves at its ready line, rejects if it exits first
 * or is not ready in `timeoutMs`. `exited` resolves to npm's exit code (null when a signal ended it).
 */
export async function npmRun(
  script: string,
  env: Record<string, string>,
  ready: RegExp,
  timeoutMs = 60_000,
): Promise<NpmStartServer & { exited: Promise<number | null> }> {
  const child = spawn('npm', ['run', script], {
    cwd: root,
    env: { ...process.env, OPENAI_API_KEY: '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`npm run ${script} not ready:\n${out}`)), timeoutMs);
    child.stdout!.on('data', () => ready.test(out) && (clearTimeout(timer), resolve()));
    void exited.then((code) => (clearTimeout(timer), reject(new Error(`npm run ${script} exited ${code}:\n${out}`))));
  });
  return { child, output: () => out, exited };
}
