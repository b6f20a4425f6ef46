import { Queue } from 'bullmq';
import IORedis from 'ioredis';
import { Client } from 'pg';
import { RUNTIME_QUEUE_NAME, TURN_QUEUE_NAME, turnJobId } from '../../libs/engine';
import { type ManagedProcess, REDIS_URL, type StackOptions, startApp, startStack, type Stack } from './stack';

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** How long `workerRunning` waits for the moment to kill (a hang guard). */
const WAIT_MS = 30_000;

/**
 * A stack for killing a worker in the middle of a runtime: the processes (`startStack`), a
 * connection to the stack's database (to read the log), and the queues (to see which worker holds a
 * job: a runtime job, or the turn job that runs a stage of one runtime inline).
 */
export interface CrashStack {
  stack: Stack;
  db: Client;
  redis: IORedis;
  runtimes: Queue;
  turns: Queue;
  /** How many jobs of the execution the queues hold (its turn job, its runtime jobs): 0 once every one has ended. */
  jobsOf(executionId: string): Promise<number>;
  /**
   * Once an event of type `after` is recorded for the execution, the worker id (`w1`, ...) whose
   * runtime job of that execution is active (else whose turn job is: it runs a stage of one runtime
   * inline): the worker to kill at that moment.
   */
  workerRunning(executionId: string, after: string): Promise<string>;
  /** As `workerRunning`, or null once the execution's turn is committed (the moment has passed). */
  workerRunningIfAny(executionId: string, after: string): Promise<string | null>;
  /** SIGKILLs the worker with that id; resolves when it has exited. */
  kill(workerId: string): Promise<number | null>;
  /** Starts a worker again under the id of one that was killed (`stack.workers` then lists it, not the dead one). */
  restartWorker(workerId: string): Promise<ManagedProcess>;
  /** SIGKILLs the API; resolves when it has exited. */
  killApi(): Promise<void>;
  /** Starts the API again, same port and settings (`stack.api` is then the new one); stopped with the stack. */
  restartApi(): Promise<ManagedProcess>;
  stop(): Promise<void>;
}

export async function crashStack(options: StackOptions): Promise<CrashStack> {
  const stack = await startStack(options);
  const db = new Client({ connectionString: stack.databaseUrl });
  const redis = new IORedis(REDIS_URL, { maxRetriesPerRequest: null });
  const runtimes = new Queue(RUNTIME_QUEUE_NAME, { connection: redis, prefix: stack.env.COVEL_QUEUE_PREFIX });
  const turns = new Queue(TURN_QUEUE_NAME, { connection: redis, prefix: stack.env.COVEL_QUEUE_PREFIX });
  // APIs started again: the stack stops the processes it started itself
  const restartedApis: ManagedProcess[] = [];
  const stop = async () => {
    await Promise.all(restartedApis.map((a) => a.stop()));
    await runtimes.close();
    await turns.close();
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
  /** The worker running the execution's runtime once `after` is recorded; null when the wait ends (or the turn commits, with `orCommitted`). */
  async function runningOrCommitted(executionId: string, after: string, orCommitted: boolean): Promise<string | null> {
    const activeOf = async (queue: Queue) => (await queue.getActive()).find((j) => (j.data as { executionId: string }).executionId === executionId);
    for (const deadline = Date.now() + WAIT_MS; Date.now() < deadline; await sleep(20)) {
      const recorded = await db.query(`select type from events where type = any($1) and data->>'executionId' = $2`, [[after, 'turn.committed@1'], executionId]);
      if (!recorded.rows.some((r: { type: string }) => r.type === after)) continue;
      // a runtime job, else the turn job (a stage of one runtime runs inline in it; waiting for its children it is not active)
      const active = (await activeOf(runtimes)) ?? (await activeOf(turns));
      if (active?.processedBy) return active.processedBy;
      if (orCommitted && recorded.rows.some((r: { type: string }) => r.type === 'turn.committed@1')) return null;
    }
    return null;
  }
  return {
    stack,
    db,
    redis,
    runtimes,
    turns,
    async jobsOf(executionId) {
      const turn = await turns.getJob(turnJobId(executionId));
      const children = await runtimes.getJobs(['active', 'waiting', 'delayed', 'prioritized', 'waiting-children', 'paused']);
      return (turn ? 1 : 0) + children.filter((j) => (j.data as { executionId?: string }).executionId === executionId).length;
    },
    async workerRunning(executionId, after) {
      const worker = await runningOrCommitted(executionId, after, false);
      if (worker === null) throw new Error(`no runtime job of execution ${executionId} running after ${after}`);
      return worker;
    },
    workerRunningIfAny: (executionId, after) => runningOrCommitted(executionId, after, true),
    async kill(workerId) {
      const victim = stack.workers.find((w) => w.name === `worker ${workerId}`);
      if (!victim) throw new Error(`no worker ${workerId}`);
      victim.child.kill('SIGKILL');
      return victim.exited;
    },
    async restartWorker(workerId) {
      const dead = stack.workers.findIndex((w) => w.name === `worker ${workerId}`);
      if (dead >= 0 && stack.workers[dead].child.exitCode === null && stack.workers[dead].child.signalCode === null)
        throw new Error(`worker ${workerId} is still running`);
      const worker = await stack.startWorker(workerId);
      if (dead >= 0) stack.workers.splice(dead, 1);
      stack.workers.push(worker);
      return worker;
    },
    async killApi() {
      stack.api.child.kill('SIGKILL');
      await stack.api.exited;
    },
    async restartApi() {
      const api = await startApp('api (restarted)', 'apps/api/main.ts', stack.env, /listening on/);
      restartedApis.push(api);
      stack.api = api;
      return api;
    },
    stop,
  };
}
