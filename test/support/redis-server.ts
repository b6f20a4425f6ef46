import { type ChildProcess, spawn } from 'node:child_process';
import IORedis from 'ioredis';
import { freePort } from './stack';

/** A private redis-server child (no persistence) that a test may kill and start again on the same port. */
export interface RedisChild {
  port: number;
  url: string;
  /** Kills the server (SIGKILL: an outage, not a shutdown); its data is gone. */
  kill(): Promise<void>;
  /** Starts it again on the same port. */
  start(): Promise<void>;
}

export async function startRedisChild(): Promise<RedisChild> {
  const port = await freePort();
  let child: ChildProcess | null = null;

  const start = async () => {
    const proc = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
    child = proc;
    const probe = new IORedis({ port, host: '127.0.0.1', lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    probe.on('error', () => undefined);
    try {
      for (let i = 0; i < 100; i++) {
        if (proc.exitCode !== null) throw new Error(`redis-server on port ${port} exited (${proc.exitCode})`);
        try {
          await probe.connect();
          await probe.ping();
          return;
        } catch {
          probe.disconnect();
          await new Promise((r) => setTimeout(r, 50));
        }
      }
      throw new Error(`redis-server on port ${port} did not start`);
    } finally {
      probe.disconnect();
    }
  };

  await start();
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    async kill() {
      const proc = child;
      if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
      const exited = new Promise((r) => proc.once('exit', r));
      proc.kill('SIGKILL');
      await exited;
      child = null;
    },
    start,
  };
}
