import type { ChildProcess } from 'node:child_process';
import { ProviderEmulator } from '../../libs/emulator';
import { ATTR, SPAN } from '../../libs/telemetry';
import { clientClosed, requestWith, SLOW_MARK, storyScript } from '../support/cancel';
import { type CrashStack, crashStack, sleep } from '../support/crash-stack';
import { npmRun } from '../support/npm-start';
import { startCollector } from '../support/otlp-collector';
import type { Stack } from '../support/stack';

/** Hang guard of a stop (not a speed bound): the default grace period is 7 s, the stream ~5 s. */
const STOP_WITHIN_MS = 30_000;

/**
 * Issue 31 item 1 on PostgreSQL + BullMQ, the API and the workers as their own processes (started
 * as `node -r ./tools/register.js apps/...` as the compose file does, or through `npm run`): SIGTERM
 * is a graceful stop. A worker stops taking jobs, lets its running turn end within
 * `COVEL_SHUTDOWN_GRACE_MS` or hands the job back (moved to delayed, no attempt spent: another worker
 * takes it at once, not after its lock expires), and exits 0; the API stops answering and exits 0
 * while a worker goes on with the turn. Every turn commits exactly once. The model is the emulator
 * over HTTP writing the long story a word every 100 ms.
 */
describe('SIGTERM to the API and worker processes (PostgreSQL + BullMQ)', () => {
  let emulator: ProviderEmulator;
  let crash: CrashStack;
  let stack: Stack;

  beforeAll(async () => {
    emulator = await new ProviderEmulator({ chunkDelayMs: 100, script: storyScript() }).start();
    crash = await crashStack({ workers: 0, env: { COVEL_EMULATOR_URL: emulator.url } });
    stack = crash.stack;
  }, 120_000);
  afterAll(async () => {
    await crash?.stop();
    await emulator?.stop();
  }, 60_000);

  /** The execution's commits, failures and recorded model replies in the log. */
  const recorded = async (executionId: string) => {
    const { rows } = await crash.db.query<{ type: string }>(`select type from events where data->>'executionId' = $1`, [executionId]);
    const count = (type: string) => rows.filter((r) => r.type === type).length;
    return { committed: count('turn.committed@1'), failed: count('execution.failed@1'), responded: count('llm.responded@1') };
  };

  /** A turn whose model call is streaming on worker `workerId` (~300 ms of its ~5 s reply sent). */
  const turnMidStream = async (workerId: string) => {
    const { id: sessionId } = await stack.client.createSession({ worldId: 'emberback', plugins: ['narrator'] });
    const input = `${SLOW_MARK} ring the bell ${sessionId}`;
    const { executionId } = await stack.client.submit(sessionId, input);
    const call = await requestWith(emulator.requests, input);
    expect(await crash.workerRunning(executionId, 'llm.calling@1')).toBe(workerId);
    await sleep(300);
    return { sessionId, executionId, call };
  };

  /** The execution's jobs that run or wait to run (its turn job while it waits for children is neither). */
  const jobsOf = async (executionId: string) =>
    (await Promise.all([crash.runtimes, crash.turns].map((q) => q.getJobs(['active', 'delayed', 'waiting', 'prioritized']))))
      .flat()
      .filter((j) => (j.data as { executionId: string }).executionId === executionId);

  /** SIGTERM to `child`; its exit code and how long the stop took (signal to exit). */
  const terminate = async (name: string, child: ChildProcess, exited: Promise<number | null>) => {
    const started = Date.now();
    child.kill('SIGTERM');
    const code = await Promise.race([exited, sleep(STOP_WITHIN_MS).then(() => 'still running')]);
    const ms = Date.now() - started;
    console.log(`${name} stopped by SIGTERM in ${ms} ms, exit ${String(code)}`);
    return { code, ms };
  };

  it('`npm run start:worker` gets SIGTERM mid-turn: the turn ends within the grace period and commits once, its spans are flushed, exit 0', async () => {
    // spans are batched and sent every 10 minutes: only the stop's flush sends this turn's
    const collector = await startCollector();
    const worker = await npmRun(
      'start:worker',
      { ...stack.env, COVEL_WORKER_ID: 'w1', OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, OTEL_BSP_SCHEDULE_DELAY: '600000' },
      /ready/,
    );
    try {
      const { executionId, call } = await turnMidStream('w1');
      const { code } = await terminate('npm run start:worker', worker.child, worker.exited);
      expect(code).toBe(0);
      expect(worker.output()).toMatch(/SIGTERM: stopping[\s\S]*stopped in \d+ ms/);
      expect(call.clientClosed).toBeUndefined(); // read to its end
      expect(await recorded(executionId)).toEqual({ committed: 1, failed: 0, responded: 1 });
      // the job that ran the narrator (the turn job: a stage of one runtime runs inline) completed: it committed the turn
      expect(await jobsOf(executionId)).toEqual([]);
      const traces = new Set(collector.spans.filter((span) => span.attributes[ATTR.execution] === executionId).map((span) => span.traceId));
      const spans = collector.spans.filter((span) => span.service === 'covel-worker' && traces.has(span.traceId)).map((span) => span.name);
      expect(spans).toEqual(expect.arrayContaining([SPAN.turnJob, SPAN.runtimeJob, SPAN.modelCall]));
    } finally {
      if (worker.child.exitCode === null) process.kill(-worker.child.pid!, 'SIGKILL');
      await new Promise((r) => collector.server.close(r));
    }
  }, 120_000);

  it('past the grace period the job is handed back (delayed, no attempt spent), exit 0; the next worker commits the turn once', async () => {
    const worker = await stack.startWorker('w2', { COVEL_SHUTDOWN_GRACE_MS: '300' });
    const { executionId, call } = await turnMidStream('w2');
    const { code } = await terminate('start:worker (node)', worker.child, worker.exited);
    expect(code).toBe(0);
    expect(await clientClosed(call, 5_000)).toBeDefined(); // its model call was aborted
    // back in the queue at once, not active under a lock waiting to expire; no attempt spent
    const jobs = await jobsOf(executionId);
    expect(await Promise.all(jobs.map(async (j) => ({ state: await j.getState(), attemptsMade: j.attemptsMade })))).toEqual([
      { state: expect.stringMatching(/^(delayed|waiting|prioritized)$/), attemptsMade: 0 },
    ]);
    expect(await recorded(executionId)).toEqual({ committed: 0, failed: 0, responded: 0 });

    const next = await stack.startWorker('w3');
    expect(await stack.client.waitFor(executionId, 60_000)).toBe('committed');
    expect(await recorded(executionId)).toEqual({ committed: 1, failed: 0, responded: 1 });
    await next.stop();
  }, 120_000);

  it('the API gets SIGTERM while a worker runs a turn: it exits 0, the turn commits once; `npm run start:api` stops with 0 too', async () => {
    const worker = await stack.startWorker('w4');
    let api: Awaited<ReturnType<typeof npmRun>> | null = null;
    try {
      const { executionId } = await turnMidStream('w4');
      const { code } = await terminate('start:api (node)', stack.api.child, stack.api.exited);
      expect(code).toBe(0);
      expect(stack.api.output()).toMatch(/stopped in \d+ ms/);

      api = await npmRun('start:api', stack.env, /listening on/);
      expect(await stack.client.waitFor(executionId, 60_000)).toBe('committed');
      expect(await recorded(executionId)).toEqual({ committed: 1, failed: 0, responded: 1 });
      const viaNpm = await terminate('npm run start:api', api.child, api.exited);
      expect(viaNpm.code).toBe(0);
    } finally {
      if (api && api.child.exitCode === null) process.kill(-api.child.pid!, 'SIGKILL');
      await worker.stop();
    }
  }, 120_000);
});
