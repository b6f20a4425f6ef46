import { Queue } from 'bullmq';
import IORedis from 'ioredis';
import { Client } from 'pg';
import { RUNTIME_QUEUE_NAME } from '../../libs/engine';
import { REDIS_URL, type StackOptions, startStack, type Stack } from './stack';

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** How long `workerRunning` waits for the moment to kill (a hang guard). */
const WAIT_MS = 30_000;

/**
 * A stack for killing a worker in the middle of a runtime job: the processes (`startStack`), a
 * connection to the stack's database (to read the log), and the runtime queue (to see which worker
 * holds a job).
 */
export interface CrashStack {
  stack: Stack;
  db: Client;
  redis: IORedis;
  runtimes: Queue;
  /**
   * Once an event of type `after` is recorded for the execution, the worker id (`w1`, ...) whose
   * runtime job of that execution is active: the worker to kill at that moment.
   */
  workerRunning(executionId: string, after: string): Promise<string>;
  /** SIGKILLs the worker with that id; resolves when it has exited. */
  kill(workerId: string): Promise<number | null>;
  stop(): Promise<void>;
}

export async function crashStack(options: StackOptions): Promise<CrashStack> {
  const stack = await startStack(options);
  const db = new Client({ connectionString: stack.databaseUrl });
  const redis = new IORedis(REDIS_URL, { maxRetriesPerRequest: null });
  const runtimes = new Queue(RUNTIME_QUEUE_NAME, { connection: redis, prefix: stack.env.COVEL_QUEUE_PREFIX });
  const stop = async () => {
    await runtimes.close();
    redis.disconnect();
    await db.end().catch(() => undefined); // never connected when connect() failed
    await stack.stop();
  };
  try {
    await db.connect();
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    stack,
    db,
    redis,
    runtimes,
    async workerRunning(executionId, after) {
      for (const deadline = Date.now() + WAIT_MS; Date.now() < deadline; await sleep(20)) {
        const recorded = await db.query(`select 1 from events where type = $1 and data->>'executionId' = $2`, [after, executionId]);
        if (!recorded.rowCount) continue;
        const active = (await runtimes.getActive()).find((j) => (j.data as { executionId: string }).executionId === executionId);
        if (active?.processedBy) return active.processedBy;
      }
      throw new Error(`no runtime job of execution ${executionId} running after ${after}`);
    },
    async kill(workerId) {
      const victim = stack.workers.find((w) => w.name === `worker ${workerId}`);
      if (!victim) throw new Error(`no worker ${workerId}`);
      victim.child.kill('SIGKILL');
      return victim.exited;
    },
    stop,
  };
}
