import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';

const root = join(__dirname, '..', '..');

/** Kept of each process's output: its tail, for the error message when it fails. */
const OUTPUT_TAIL_CHARS = 20_000;

export interface BenchProcess {
  name: string;
  pid: number;
  /** The tail of its stdout and stderr. */
  output(): string;
  /** True once it has exited. */
  exited(): boolean;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves once it has exited. */
  stop(graceMs?: number): Promise<void>;
}

export interface SpawnRequest {
  name: string;
  /** A TypeScript entry, from the repository root (run as `node -r ./tools/register.js <script>`). */
  script: string;
  env: Record<string, string>;
  /** Its ready line on stdout. */
  ready: RegExp;
  readyTimeoutMs?: number;
}

/**
 * Starts a Node process of the repository and resolves once its output matches `ready`; rejects (and
 * kills it) if it exits first or is not ready in time. `track` hears about it before it is ready, so
 * a run interrupted while it starts still stops it.
 */
export async function spawnProcess(request: SpawnRequest, track: (p: BenchProcess) => void): Promise<BenchProcess & { readyLine: string }> {
  const child = spawn(
    process.execPath,
    [...(process.env.COVEL_BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean), '-r', './tools/register.js', request.script],
    {
      cwd: root,
      env: request.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let out = '';
  const append = (chunk: Buffer) => {
    out += chunk.toString('utf8');
    if (out.length > 2 * OUTPUT_TAIL_CHARS) out = out.slice(-OUTPUT_TAIL_CHARS);
  };
  child.stdout!.on('data', append);
  child.stderr!.on('data', append);
  const exit = new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    // e.g. spawn failed: there is no process to wait for
    child.once('error', (error) => {
      out += `\n${String(error)}`;
      resolve();
    });
  });
  const proc = processHandle(request.name, child, exit, () => out);
  track(proc);
  const timeoutMs = request.readyTimeoutMs ?? 60_000;
  try {
    const readyLine = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${request.name} not ready after ${timeoutMs} ms:\n${out}`)), timeoutMs);
      const check = () => {
        const match = request.ready.exec(out);
        if (!match) return;
        clearTimeout(timer);
        child.stdout!.off('data', check);
        resolve(lineAround(out, match.index));
      };
      child.stdout!.on('data', check);
      void exit.then(() => {
        clearTimeout(timer);
        reject(new Error(`${request.name} exited (${child.exitCode ?? child.signalCode}) before it was ready:\n${out}`));
      });
    });
    return { ...proc, readyLine };
  } catch (error) {
    await proc.stop(2_000);
    throw error;
  }
}

function processHandle(name: string, child: ChildProcess, exit: Promise<void>, output: () => string): BenchProcess {
  let gone = false;
  void exit.then(() => (gone = true));
  const exited = () => gone || child.exitCode !== null || child.signalCode !== null;
  return {
    name,
    pid: child.pid ?? -1,
    output: () => output().slice(-OUTPUT_TAIL_CHARS),
    exited,
    async stop(graceMs = 10_000) {
      if (exited()) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      await exit;
      clearTimeout(timer);
    },
  };
}

function lineAround(text: string, index: number): string {
  const start = text.lastIndexOf('\n', index) + 1;
  const end = text.indexOf('\n', index);
  return text.slice(start, end === -1 ? undefined : end);
}
