/**
 * How long a turn takes to fail when its provider never answers, with the default deadlines, as
 * users run it: `npm start` (the embedded default) with every model call going to a loopback TCP
 * server that accepts connections, reads the request and never sends a byte. Prints one JSON line
 * (the execution's status, error, attempts, seconds from the submit to its end, and `/health`).
 * Run: node -r ./tools/register.js bench/never-answering-provider.ts
 * (not part of `npm run bench`: with the defaults it waits about 90 s, the first-byte deadline).
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../test/support/stack';

async function main(): Promise<void> {
  const sockets = new Set<Socket>();
  const silent = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.resume();
  });
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  const port = await freePort();
  const key = `cvl_${randomBytes(24).toString('hex')}`;
  const dataDir = mkdtempSync(join(tmpdir(), 'covel-never-answering-'));
  const child = spawn(process.execPath, ['-r', './tools/register.js', 'apps/main.ts'], {
    cwd: join(__dirname, '..'),
    env: {
      ...process.env,
      PORT: String(port),
      COVEL_DATA_DIR: dataDir,
      COVEL_BOOTSTRAP_API_KEY: key,
      COVEL_EMULATOR_URL: `http://127.0.0.1:${(silent.address() as { port: number }).port}`,
      COVEL_LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const base = `http://127.0.0.1:${port}`;
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  try {
    for (;;) {
      const live = await fetch(`${base}/health/live`).then(
        (r) => r.ok,
        () => false,
      );
      if (live) break;
      await new Promise((r) => setTimeout(r, 300));
    }
    const session = (await (
      await fetch(`${base}/v1/sessions`, { method: 'POST', headers, body: JSON.stringify({ worldId: 'emberback', plugins: ['narrator'] }) })
    ).json()) as { id: string };
    const started = performance.now();
    const { executionId } = (await (
      await fetch(`${base}/v1/sessions/${session.id}/inputs`, { method: 'POST', headers, body: JSON.stringify({ text: 'Ring the bell' }) })
    ).json()) as { executionId: string };
    let view: { status: string; attempts: number; error: unknown };
    do {
      view = (await (await fetch(`${base}/v1/executions/${executionId}?waitMs=25000`, { headers })).json()) as typeof view;
    } while ((view.status === 'queued' || view.status === 'running') && performance.now() - started < 600_000);
    const seconds = Number(((performance.now() - started) / 1000).toFixed(1));
    const health = (await (await fetch(`${base}/health`)).json()) as { status: string; providers: unknown };
    console.log(
      JSON.stringify({
        status: view.status,
        error: view.error,
        attempts: view.attempts,
        seconds,
        health: { status: health.status, providers: health.providers },
      }),
    );
  } finally {
    child.kill('SIGINT');
    await new Promise((resolve) => child.once('exit', resolve));
    for (const socket of sockets) socket.destroy();
    silent.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

void main();
