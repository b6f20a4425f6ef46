import { randomUUID } from 'node:crypto';
import { NotFoundError, UnavailableError } from '../../../errors';
import type {
  FairnessOptions,
  JobOutcome,
  JobStartedListener,
  QueueDepth,
  QueueHandlers,
  RetryPolicy,
  RuntimeJob,
  TurnJob,
  TurnJobContext,
  TurnQueue,
  TurnStep,
  WorldGenerationJob,
} from '../port';
import { inSpan, startTracingForTests, type TestTracing, type TraceCarrier } from '../../../telemetry';

/** A queue driver under test: a fresh queue per test (BullMQ: its own key prefix). */
export interface ConformanceDriver {
  name: string;
  create(options: { concurrency: number; retry: RetryPolicy; onJobStarted?: JobStartedListener; fairness?: FairnessOptions }): TurnQueue;
}

const retry: RetryPolicy = { turnAttempts: 3, runtimeAttempts: 3, worldAttempts: 3, backoffMs: 10 };
/** Hang guard of a test (not a speed bound): BullMQ moves jobs through Redis. */
const TEST_TIMEOUT_MS = 30_000;
/** How long a child waits for its siblings to start before it gives up waiting (a hang guard). */
const SIBLINGS_WAIT_MS = 10_000;

const done: JobOutcome = { kind: 'done' };
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms).unref());

function deferred<T = void>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

const turnJob = (): TurnJob => ({ executionId: randomUUID(), sessionId: randomUUID(), tenantId: randomUUID() });
const worldJob = (): WorldGenerationJob => ({ jobId: randomUUID(), tenantId: randomUUID() });
const child = (parent: TurnJob, runtimeId: string, attempt = 1): RuntimeJob => ({ ...parent, attempt, pluginId: 'plugin', runtimeId });

/**
 * A turn job's claim as the engine keeps it (`turnStep`): with the job (`claimedAttempt`), or, when
 * the queue names the job (`claimant`), in the log, here a map: a later run of the same job finds it
 * there under the same claimant.
 */
const claimLog = new Map<string, number>();
const claimKey = (job: TurnJob, claimant: string) => `${job.executionId}/${claimant}`;
function claimed(job: TurnJob, ctx: TurnJobContext): number | null {
  return ctx.claimedAttempt ?? (ctx.claimant !== undefined ? (claimLog.get(claimKey(job, ctx.claimant)) ?? null) : null);
}
async function claim(job: TurnJob, ctx: TurnJobContext, attempt: number): Promise<void> {
  if (ctx.claimant !== undefined) claimLog.set(claimKey(job, ctx.claimant), attempt);
  await ctx.recordClaim(attempt);
}

/**
 * The queue port's semantics, the same for every driver: run by a unit test with the in-process
 * driver and by an integration test with BullMQ on the real Redis.
 */
export function queueConformance(driver: ConformanceDriver): void {
  describe(`queue port conformance: ${driver.name}`, () => {
    const open: TurnQueue[] = [];
    const create = (concurrency: number, onJobStarted?: JobStartedListener, fairness?: FairnessOptions) => {
      const queue = driver.create({ concurrency, retry, ...(onJobStarted ? { onJobStarted } : {}), ...(fairness ? { fairness } : {}) });
      open.push(queue);
      return queue;
    };
    afterEach(async () => {
      await Promise.all(open.splice(0).map((q) => q.close()));
    });

    /** Handlers with defaults: a turn job is done at once, a runtime job too; world jobs only when given. */
    const handlers = (h: Partial<QueueHandlers>): QueueHandlers => ({
      turn: h.turn ?? (async () => done),
      runtime: h.runtime ?? (async () => done),
      ...(h.world ? { world: h.world } : {}),
    });

    it(
      'depth counts jobs per queue and state; each job tells its first start once (metrics)',
      async () => {
        const starts: { queue: string; waitedMs: number }[] = [];
        const queue = create(4, (info) => starts.push(info));
        const jobs = (depth: QueueDepth[], queueName: string, state: string) => depth.find((d) => d.queue === queueName && d.state === state)?.jobs ?? 0;
        const parent = turnJob();
        const bothRunning = deferred();
        const release = deferred();
        const ended = deferred();
        let running = 0;
        await queue.enqueue(parent);
        expect(jobs(await queue.depth(), 'covel-turns', 'waiting')).toBe(1);
        queue.consume({
          turn: async (job, ctx): Promise<TurnStep> => {
            if (claimed(job, ctx) === null) {
              await claim(job, ctx, 1);
              return { kind: 'awaitChildren', children: [child(job, 'a'), child(job, 'b')] };
            }
            ended.resolve();
            return done;
          },
          runtime: async () => {
            if (++running === 2) bothRunning.resolve();
            await release.promise;
            return done;
          },
        });
        await bothRunning.promise;
        const during = await queue.depth();
        expect([jobs(during, 'covel-turns', 'waiting-children'), jobs(during, 'covel-runtimes', 'active')]).toEqual([1, 2]);
        expect(jobs(during, 'covel-turns', 'waiting')).toBe(0);
        release.resolve();
        await ended.promise;
        // the turn job ran twice (before and after its children) but started once; each child once
        expect(starts.map((s) => s.queue).sort()).toEqual(['covel-runtimes', 'covel-runtimes', 'covel-turns']);
        expect(starts.every((s) => s.waitedMs >= 0)).toBe(true);
      },
      TEST_TIMEOUT_MS,
    );

    it(
      'enqueue is idempotent per execution: while the job waits and while it runs',
      async () => {
        const queue = create(1);
        const a = turnJob();
        const b = turnJob();
        const runs: string[] = [];
        const ended = deferred();
        for (let i = 0; i < 3; i++) await queue.enqueue(a);
        await queue.enqueue(b);
        queue.consume(
          handlers({
            turn: async (job) => {
              runs.push(job.executionId);
              if (job.executionId === a.executionId && runs.length === 1) await queue.enqueue(a); // running: a no-op
              if (job.executionId === b.executionId) ended.resolve();
              return done;
            },
          }),
        );
        await ended.promise;
        // one job at a time, in order: a duplicate of `a` would have run before `b`
        expect(runs).toEqual([a.executionId, b.executionId]);
      },
      TEST_TIMEOUT_MS,
    );

    it(
      'an enqueue while its turn job runs (a resume recorded after the run read the log) runs the execution once more, as soon as that job has ended',
      async () => {
        const queue = create(2);
        const job = turnJob();
        const runs: number[] = [];
        const running = deferred();
        const resumed = deferred();
        const ranAgain = deferred();
        queue.consume(
          handlers({
            turn: async () => {
              runs.push(Date.now());
              if (runs.length > 1) ranAgain.resolve();
              else {
                running.resolve();
                await resumed.promise;
              }
              return done;
            },
          }),
        );
        await queue.enqueue(job);
        await running.promise;
        // the API's resume while the job that recorded the suspension has not ended (twice: one more run, not two)
        await queue.enqueue(job);
        await queue.enqueue(job);
        const ended = Date.now();
        resumed.resolve();
        await Promise.race([ranAgain.promise, sleep(5_000)]);
        expect(runs).toHaveLength(2);
        // at once, not when a sweeper finds the execution pending with no job (seconds later)
        expect(runs[1] - ended).toBeLessThan(2_000);
        await sleep(300);
        expect(runs).toHaveLength(2);
      },
      TEST_TIMEOUT_MS,
    );

    // a hand-off is made by the job's release when it is done, at once when it ends otherwise (later here)
    for (const ending of ['done', 'later'] as const)
      it(
        `a turn job's hand-off to its session's execution whose job runs adds no run of it (that run read the log after the hand-off's cause): a run ending ${ending}`,
        async () => {
          const queue = create(2);
          const first = turnJob();
          const next = { ...first, executionId: randomUUID() };
          const runs: string[] = [];
          const nextRunning = deferred();
          const nextGo = deferred();
          const firstEnded = deferred();
          queue.consume(
            handlers({
              turn: async (job): Promise<TurnStep> => {
                runs.push(job.executionId);
                const runsOf = (id: string) => runs.filter((r) => r === id).length;
                if (job.executionId === first.executionId) {
                  if (runsOf(first.executionId) === 1) {
                    await queue.enqueue(next); // the hand-off, made by the run
                    if (ending === 'later') return { kind: 'later', delayMs: 50 };
                  }
                  firstEnded.resolve();
                } else if (runsOf(next.executionId) === 1) {
                  nextRunning.resolve();
                  await nextGo.promise;
                }
                return done;
              },
            }),
          );
          await queue.enqueue(next);
          await nextRunning.promise;
          await queue.enqueue(first);
          await firstEnded.promise;
          await sleep(300); // the first job's end (its release makes its hand-off)
          nextGo.resolve();
          await sleep(500);
          expect(runs).toEqual([next.executionId, ...(ending === 'later' ? [first.executionId] : []), first.executionId]);
        },
        TEST_TIMEOUT_MS,
      );

    it(
      'a turn job waits for all its children, which run in parallel; its claim is kept between runs',
      async () => {
        const queue = create(4);
        const parent = turnJob();
        const ids = ['one', 'two', 'three'];
        const completed: string[] = [];
        const turnRuns: { claimedAttempt: number | null; completed: string[] }[] = [];
        let running = 0;
        let maxRunning = 0;
        const allStarted = deferred();
        let started = 0;
        const ended = deferred();
        queue.consume({
          turn: async (job, ctx): Promise<TurnStep> => {
            turnRuns.push({ claimedAttempt: claimed(job, ctx), completed: [...completed].sort() });
            if (claimed(job, ctx) === null) {
              await claim(job, ctx, 1);
              return { kind: 'awaitChildren', children: ids.map((id) => child(job, id)) };
            }
            ended.resolve();
            return done;
          },
          runtime: async (job) => {
            running++;
            maxRunning = Math.max(maxRunning, running);
            if (++started === ids.length) allStarted.resolve();
            await Promise.race([allStarted.promise, sleep(SIBLINGS_WAIT_MS)]);
            running--;
            completed.push(job.runtimeId);
            return done;
          },
        });
        await queue.enqueue(parent);
        await ended.promise;
        expect(maxRunning).toBe(3);
        expect(turnRuns).toEqual([
          { claimedAttempt: null, completed: [] },
          { claimedAttempt: 1, completed: ['one', 'three', 'two'] },
        ]);
      },
      TEST_TIMEOUT_MS,
    );

    it(
      'the claimant of a turn job, when the driver gives one, is the same on every run of the job (its retry, its run after its children) and another for a job of the same execution enqueued anew',
      async () => {
        const queue = create(2);
        const job = turnJob();
        const claimants: (string | undefined)[] = [];
        const ended = deferred();
        const anew = deferred();
        queue.consume(
          handlers({
            turn: async (j, ctx): Promise<TurnStep> => {
              claimants.push(ctx.claimant);
              if (claimants.length === 1) throw new Error('a failure to retry');
              if (claimants.length === 2) return { kind: 'awaitChildren', children: [child(j, 'c')] };
              if (claimants.length === 3) ended.resolve();
              else anew.resolve();
              return done;
            },
          }),
        );
        await queue.enqueue(job);
        await ended.promise;
        // enqueued again until a job runs anew (while the first one is still there, an enqueue adds nothing)
        while (!(await Promise.race([anew.promise.then(() => true), sleep(50).then(() => false)]))) await queue.enqueue(job);
        const [first, retried, afterChildren, again] = claimants;
        expect([retried, afterChildren]).toEqual([first, first]);
        if (first !== undefined) expect(again).not.toBe(first);
        else expect(again).toBeUndefined();
      },
      TEST_TIMEOUT_MS,
    );

    it(
      'startChildren: a child starts while the turn run goes on; awaitChildren lists it again (running: not added anew) and the turn job runs again once all ended',
      async () => {
        const queue = create(4);
        const parent = turnJob();
        const earlyStarted = deferred();
        const lateStarted = deferred();
        const runs: string[] = [];
        let startedDuringRun = false;
        let turnRuns = 0;
        const ended = deferred();
        queue.consume({
          turn: async (job, ctx): Promise<TurnStep> => {
            turnRuns++;
            if (claimed(job, ctx) !== null) {
              ended.resolve();
              return done;
            }
            await claim(job, ctx, 1);
            await ctx.startChildren([child(job, 'early')]);
            // the run waits for the child it started: it runs now, not after the run returns
            startedDuringRun = await Promise.race([earlyStarted.promise.then(() => true), sleep(SIBLINGS_WAIT_MS).then(() => false)]);
            return { kind: 'awaitChildren', children: [child(job, 'early'), child(job, 'late')] };
          },
          runtime: async (job) => {
            runs.push(job.runtimeId);
            // `early` still runs when the turn job lists it again, until `late` has started
            if (job.runtimeId === 'early') {
              earlyStarted.resolve();
              await Promise.race([lateStarted.promise, sleep(SIBLINGS_WAIT_MS)]);
            } else lateStarted.resolve();
            return done;
          },
        });
        await queue.enqueue(parent);
        await ended.promise;
        expect(startedDuringRun).toBe(true);
        expect(runs).toEqual(['early', 'late']);
        expect(turnRuns).toBe(2);
      },
      TEST_TIMEOUT_MS,
    );

    it(
      'a failing child is retried alone (its siblings run once), a permanent failure is not retried, and both release the parent',
      async () => {
        const queue = create(4);
        const parent = turnJob();
        const runs: Record<string, number[]> = { flaky: [], steady: [], broken: [] };
        let runsAtWake: Record<string, number> | null = null;
        const ended = deferred();
        queue.consume({
          turn: async (job, ctx): Promise<TurnStep> => {
            if (claimed(job, ctx) === null) {
              await claim(job, ctx, 1);
              return { kind: 'awaitChildren', children: Object.keys(runs).map((id) => child(job, id)) };
            }
            runsAtWake = Object.fromEntries(Object.entries(runs).map(([k, v]) => [k, v.length]));
            ended.resolve();
            return done;
          },
          runtime: async (job, attempt) => {
            runs[job.runtimeId].push(attempt.attemptsMade);
            if (job.runtimeId === 'flaky' && attempt.attemptsMade === 0) throw new UnavailableError('provider', 'try again');
            if (job.runtimeId === 'broken') throw new NotFoundError('THING_NOT_FOUND', 'retrying cannot fix this');
            return done;
          },
        });
        await queue.enqueue(parent);
        await ended.promise;
        // the parent wakes only once every child has ended: a retried `broken` would have run 3 times by then
        expect(runsAtWake).toEqual({ flaky: 2, steady: 1, broken: 1 });
        expect(runs).toEqual({ flaky: [0, 1], steady: [0], broken: [0] });
      },
      TEST_TIMEOUT_MS,
    );

    it(
      'a turn job: a transient failure is retried (its claim kept), a permanent one ends the job at once',
      async () => {
        const queue = create(1);
        const flaky = turnJob();
        const broken = turnJob();
        const marker = turnJob();
        const runs: { id: string; attemptsMade: number; claimedAttempt: number | null }[] = [];
        const flakyDone = deferred();
        const brokenAgain = deferred();
        queue.consume(
          handlers({
            turn: async (job, ctx) => {
              runs.push({ id: job.executionId, attemptsMade: ctx.attemptsMade, claimedAttempt: claimed(job, ctx) });
              if (job.executionId === flaky.executionId && ctx.attemptsMade === 0) {
                await claim(job, ctx, 7);
                throw new UnavailableError('database', 'try again');
              }
              if (job.executionId === broken.executionId && runs.filter((r) => r.id === broken.executionId).length === 1) {
                throw new NotFoundError('THING_NOT_FOUND', 'retrying cannot fix this');
              }
              // the broken job ran before this one (one at a time, in order): enqueue it again. Were it
              // waiting for a retry, this would be a no-op and its next run would count an attempt made
              if (job.executionId === marker.executionId) await queue.enqueue(broken);
              else if (job.executionId === broken.executionId) brokenAgain.resolve();
              else if (job.executionId === flaky.executionId) flakyDone.resolve();
              return done;
            },
          }),
        );
        await queue.enqueue(flaky);
        await queue.enqueue(broken);
        await queue.enqueue(marker);
        await Promise.all([flakyDone.promise, brokenAgain.promise]);
        expect(runs.filter((r) => r.id === flaky.executionId)).toEqual([
          { id: flaky.executionId, attemptsMade: 0, claimedAttempt: null },
          { id: flaky.executionId, attemptsMade: 1, claimedAttempt: 7 },
        ]);
        expect(runs.filter((r) => r.id === broken.executionId).map((r) => r.attemptsMade)).toEqual([0, 0]);
      },
      TEST_TIMEOUT_MS,
    );

    it(
      'later() runs the job again after the delay without spending an attempt (turn and runtime jobs)',
      async () => {
        const queue = create(2);
        const parent = turnJob();
        const turnAttempts: number[] = [];
        const runtimeAttempts: number[] = [];
        const ended = deferred();
        queue.consume({
          turn: async (job, ctx): Promise<TurnStep> => {
            turnAttempts.push(ctx.attemptsMade);
            if (turnAttempts.length <= 2) return { kind: 'later', delayMs: 20 };
            if (claimed(job, ctx) === null) {
              await claim(job, ctx, 1);
              return { kind: 'awaitChildren', children: [child(job, 'patient')] };
            }
            ended.resolve();
            return done;
          },
          runtime: async (_job, attempt) => {
            runtimeAttempts.push(attempt.attemptsMade);
            if (runtimeAttempts.length <= 2) return { kind: 'later', delayMs: 20 };
            // then a real failure: it counts
            if (runtimeAttempts.length === 3) throw new UnavailableError('provider', 'try again');
            return done;
          },
        });
        await queue.enqueue(parent);
        await ended.promise;
        expect(turnAttempts).toEqual([0, 0, 0, 0]);
        expect(runtimeAttempts).toEqual([0, 0, 0, 1]);
      },
      TEST_TIMEOUT_MS,
    );

    it(
      'a child added again after it has ended runs again; a turn job whose children all ended already is run again at once',
      async () => {
        const queue = create(2);
        const parent = turnJob();
        const childRuns: string[] = [];
        let turnRuns = 0;
        const ended = deferred();
        queue.consume({
          turn: async (job): Promise<TurnStep> => {
            turnRuns++;
            if (turnRuns <= 2) return { kind: 'awaitChildren', children: [child(job, 'again')] };
            if (turnRuns === 3) return { kind: 'awaitChildren', children: [] };
            ended.resolve();
            return done;
          },
          runtime: async (job) => {
            childRuns.push(job.runtimeId);
            return done;
          },
        });
        await queue.enqueue(parent);
        await ended.promise;
        expect(childRuns).toEqual(['again', 'again']);
        expect(turnRuns).toBe(4);
      },
      TEST_TIMEOUT_MS,
    );

    it(
      'close() drains: it resolves after the running job has ended, and the queue then refuses new jobs',
      async () => {
        const queue = create(2);
        const parent = turnJob();
        const running = deferred();
        const release = deferred();
        let finished = false;
        queue.consume({
          turn: async (job, ctx): Promise<TurnStep> => {
            if (claimed(job, ctx) !== null) return done;
            await claim(job, ctx, 1);
            return { kind: 'awaitChildren', children: [child(job, 'slow')] };
          },
          runtime: async () => {
            running.resolve();
            await release.promise;
            finished = true;
            return done;
          },
        });
        await queue.enqueue(parent);
        await running.promise;
        const closed = queue.close();
        setTimeout(() => release.resolve(), 50);
        await closed;
        expect(finished).toBe(true);
        expect(queue.isAvailable()).toBe(false);
        await expect(queue.enqueue(turnJob())).rejects.toBeInstanceOf(UnavailableError);
        await expect(queue.enqueueWorldGeneration(worldJob())).rejects.toBeInstanceOf(UnavailableError);
      },
      TEST_TIMEOUT_MS,
    );

    it(
      'world generation jobs: idempotent per job id, their own queue (depth, first start), retried on a transient failure, ended at once by a permanent one, later() spends no attempt',
      async () => {
        const starts: string[] = [];
        const queue = create(2, (info) => starts.push(info.queue));
        const jobs = (depth: QueueDepth[], state: string) => depth.find((d) => d.queue === 'covel-worlds' && d.state === state)?.jobs ?? 0;
        const [steady, flaky, broken, patient] = [worldJob(), worldJob(), worldJob(), worldJob()];
        for (let i = 0; i < 3; i++) await queue.enqueueWorldGeneration(steady);
        expect(jobs(await queue.depth(), 'waiting')).toBe(1);
        const runs: Record<string, number[]> = {};
        const ended = new Map<string, ReturnType<typeof deferred<void>>>([steady, flaky, broken, patient].map((j) => [j.jobId, deferred()]));
        const name = new Map([
          [steady.jobId, 'steady'],
          [flaky.jobId, 'flaky'],
          [broken.jobId, 'broken'],
          [patient.jobId, 'patient'],
        ]);
        let brokenRuns = 0;
        queue.consume(
          handlers({
            world: async (job, attempt) => {
              const who = name.get(job.jobId)!;
              (runs[who] ??= []).push(attempt.attemptsMade);
              expect(attempt.maxAttempts).toBe(3);
              if (who === 'flaky' && attempt.attemptsMade === 0) throw new UnavailableError('provider', 'try again');
              if (who === 'broken') {
                brokenRuns++;
                setTimeout(() => ended.get(job.jobId)!.resolve(), 200);
                throw new NotFoundError('THING_NOT_FOUND', 'retrying cannot fix this');
              }
              if (who === 'patient' && runs[who].length <= 2) return { kind: 'later', delayMs: 20 };
              ended.get(job.jobId)!.resolve();
              return done;
            },
          }),
        );
        await queue.enqueueWorldGeneration(flaky);
        await queue.enqueueWorldGeneration(broken);
        await queue.enqueueWorldGeneration(patient);
        await Promise.all([...ended.values()].map((d) => d.promise));
        expect(runs).toEqual({ steady: [0], flaky: [0, 1], broken: [0], patient: [0, 0, 0] });
        expect(brokenRuns).toBe(1);
        expect(starts.filter((q) => q === 'covel-worlds')).toHaveLength(4);
      },
      TEST_TIMEOUT_MS,
    );

    it(
      'a consumer without a world handler leaves world generation jobs waiting, and runs turn jobs',
      async () => {
        const queue = create(2);
        const job = worldJob();
        const turnRan = deferred();
        queue.consume({ turn: async () => (turnRan.resolve(), done), runtime: async () => done });
        await queue.enqueueWorldGeneration(job);
        await queue.enqueue(turnJob());
        await turnRan.promise;
        await sleep(100);
        expect((await queue.depth()).find((d) => d.queue === 'covel-worlds' && d.state === 'waiting')?.jobs).toBe(1);
      },
      TEST_TIMEOUT_MS,
    );

    it(
      'close with a grace period: no new job is taken; a job ending within it is waited for; past it onGraceOver is told once, a job ending `later` is handed back (not run again here), and one still running after handBackMs is left',
      async () => {
        const queue = create(4);
        const [quick, handedBack, stuck] = [turnJob(), turnJob(), turnJob()];
        const runs = new Map<string, number>();
        const started = new Map([quick, handedBack, stuck].map((j) => [j.executionId, deferred()]));
        const graceOver = deferred();
        const release = deferred();
        let quickEnded = false;
        let told = 0;
        queue.consume(
          handlers({
            turn: async (job): Promise<TurnStep> => {
              runs.set(job.executionId, (runs.get(job.executionId) ?? 0) + 1);
              started.get(job.executionId)?.resolve();
              if (job.executionId === quick.executionId) {
                await sleep(100);
                quickEnded = true;
                return done;
              }
              // the engine aborts the model call then: the job hands itself back
              if (job.executionId === handedBack.executionId) {
                await graceOver.promise;
                return { kind: 'later', delayMs: 0 };
              }
              await release.promise;
              return done;
            },
          }),
        );
        for (const job of [quick, handedBack, stuck]) await queue.enqueue(job);
        await Promise.all([...started.values()].map((d) => d.promise));
        const closed = queue.close({ graceMs: 400, handBackMs: 400, onGraceOver: () => (told++, graceOver.resolve()) });
        await expect(queue.enqueue(turnJob())).rejects.toThrow(UnavailableError);
        await closed;
        expect(quickEnded).toBe(true);
        expect(told).toBe(1);
        release.resolve(); // the stuck job ends after the close (the afterEach closes the queue again)
        await sleep(200);
        expect([quick, handedBack, stuck].map((j) => runs.get(j.executionId))).toEqual([1, 1, 1]);
      },
      TEST_TIMEOUT_MS,
    );

    describe('fair scheduling across tenants', () => {
      const tenantJob = (tenantId: string): TurnJob => ({ executionId: randomUUID(), sessionId: randomUUID(), tenantId });
      const held = async (queue: TurnQueue) => (await queue.depth()).find((d) => d.queue === 'covel-turns' && d.state === 'held')?.jobs ?? 0;
      /** Resolves true once `check` holds, false after the hang guard (a failing test fails fast, on its expectation). */
      const eventually = async (check: () => boolean, ms = 5_000) => {
        for (const end = Date.now() + ms; Date.now() < end; await sleep(10)) if (check()) return true;
        return check();
      };

      it(
        "another tenant's job starts while a tenant's backlog beyond the window is held",
        async () => {
          const queue = create(4, undefined, { window: 2 });
          const [a, b] = [randomUUID(), randomUUID()];
          const started: string[] = [];
          const gate = deferred();
          let aStartedBeforeB = -1;
          queue.consume(
            handlers({
              turn: async (job) => {
                if (job.tenantId === b) aStartedBeforeB = started.length;
                started.push(job.tenantId);
                if (job.tenantId === a) await gate.promise;
                return done;
              },
            }),
          );
          const backlog = Array.from({ length: 6 }, () => tenantJob(a));
          for (const job of backlog) await queue.enqueue(job);
          expect(await eventually(() => started.length === 2)).toBe(true);
          await queue.enqueue(tenantJob(b));
          expect(await held(queue)).toBe(5);
          const firstA = started.length;
          gate.resolve();
          expect(await eventually(() => started.length === 7)).toBe(true);
          expect(firstA).toBe(2);
          // B waited for a place in the window, not behind A's backlog: of the two places A's first
          // jobs freed, round robin gave one to A (held first) and the other to B (BullMQ may start those two in either order)
          expect(aStartedBeforeB).toBeGreaterThanOrEqual(2);
          expect(aStartedBeforeB).toBeLessThanOrEqual(3);
          expect(await held(queue)).toBe(0);
        },
        TEST_TIMEOUT_MS,
      );

      it(
        'a tenant never has more than its cap in flight: with a cap of 2 the third starts only when one ends; other tenants use the rest of the window',
        async () => {
          const [capped, free] = [randomUUID(), randomUUID()];
          const asked: string[] = [];
          const queue = create(4, undefined, {
            window: 10,
            tenantCaps: { maxInFlight: async (tenantId) => (asked.push(tenantId), tenantId === capped ? 2 : null) },
          });
          const gates = new Map<string, ReturnType<typeof deferred<void>>>();
          const started: string[] = [];
          let running = 0;
          let maxRunning = 0;
          queue.consume(
            handlers({
              turn: async (job) => {
                started.push(job.executionId);
                if (job.tenantId !== capped) return done;
                maxRunning = Math.max(maxRunning, ++running);
                await gates.get(job.executionId)!.promise;
                running--;
                return done;
              },
            }),
          );
          const jobs = Array.from({ length: 4 }, () => tenantJob(capped));
          for (const job of jobs) gates.set(job.executionId, deferred());
          for (const job of jobs) await queue.enqueue(job);
          const other = tenantJob(free);
          await queue.enqueue(other);
          expect(await eventually(() => started.includes(other.executionId) && started.length === 3)).toBe(true);
          await sleep(200);
          expect(started.filter((id) => gates.has(id))).toEqual([jobs[0].executionId, jobs[1].executionId]);
          gates.get(jobs[0].executionId)!.resolve();
          expect(await eventually(() => started.includes(jobs[2].executionId))).toBe(true);
          await sleep(100);
          expect(started).not.toContain(jobs[3].executionId);
          for (const gate of gates.values()) gate.resolve();
          expect(await eventually(() => started.includes(jobs[3].executionId))).toBe(true);
          expect(maxRunning).toBe(2);
          expect(new Set(asked)).toEqual(new Set([capped, free]));
        },
        TEST_TIMEOUT_MS,
      );

      it(
        "a turn job's hand-off (an enqueue of its session's next execution while it runs) starts that one once the job has ended; an execution held before it keeps its turn",
        async () => {
          const queue = create(1, undefined, { window: 1 });
          const first = tenantJob(randomUUID());
          const next: TurnJob = { ...first, executionId: randomUUID() };
          const other = tenantJob(randomUUID());
          const started: string[] = [];
          const gate = deferred();
          queue.consume(
            handlers({
              turn: async (job) => {
                started.push(job.executionId);
                if (job.executionId !== first.executionId) return done;
                await gate.promise;
                await queue.enqueue(next); // the hand-off, as the engine's at the end of an execution
                return done;
              },
            }),
          );
          await queue.enqueue(first);
          expect(await eventually(() => started.length === 1)).toBe(true);
          await queue.enqueue(other);
          expect(await held(queue)).toBe(1);
          gate.resolve();
          expect(await eventually(() => started.length === 3)).toBe(true);
          await sleep(100);
          expect(started).toEqual([first.executionId, other.executionId, next.executionId]);
          expect(await held(queue)).toBe(0);
        },
        TEST_TIMEOUT_MS,
      );

      it(
        'FIFO within a tenant, round robin across tenants',
        async () => {
          const queue = create(1, undefined, { window: 1 });
          const [a, b] = [randomUUID(), randomUUID()];
          const jobs = [tenantJob(a), tenantJob(a), tenantJob(a), tenantJob(b), tenantJob(b)];
          const name = new Map(jobs.map((job, i) => [job.executionId, i < 3 ? `a${i + 1}` : `b${i - 2}`]));
          for (const job of jobs) await queue.enqueue(job);
          const runs: string[] = [];
          queue.consume(handlers({ turn: async (job) => (runs.push(name.get(job.executionId)!), done) }));
          expect(await eventually(() => runs.length === 5)).toBe(true);
          expect(runs).toEqual(['a1', 'a2', 'b1', 'a3', 'b2']);
        },
        TEST_TIMEOUT_MS,
      );

      it(
        'enqueue of a held or an admitted execution adds nothing: an admitted one again takes no second place in the window',
        async () => {
          const queue = create(1, undefined, { window: 2 });
          const [admitted, second, waiting] = [turnJob(), turnJob(), turnJob()];
          for (const job of [admitted, second, waiting]) for (let i = 0; i < 3; i++) await queue.enqueue(job);
          const depth = await queue.depth();
          const turns = (state: string) => depth.find((d) => d.queue === 'covel-turns' && d.state === state)?.jobs ?? 0;
          // counted twice, `admitted` would have left no place for `second`
          expect([turns('waiting'), turns('held')]).toEqual([2, 1]);
          const runs: string[] = [];
          queue.consume(handlers({ turn: async (job) => (runs.push(job.executionId), done) }));
          expect(await eventually(() => runs.length === 3)).toBe(true);
          await sleep(200);
          expect(runs).toEqual([admitted.executionId, second.executionId, waiting.executionId]);
        },
        TEST_TIMEOUT_MS,
      );

      it(
        'a turn job waiting for its children keeps its place: the next starts only once it is done',
        async () => {
          const queue = create(2, undefined, { window: 1 });
          const [parent, next] = [turnJob(), turnJob()];
          const gate = deferred();
          const runs: string[] = [];
          let childRunning = false;
          queue.consume(
            handlers({
              turn: async (job) => {
                runs.push(job.executionId === parent.executionId ? 'parent' : 'next');
                if (job.executionId === parent.executionId && runs.filter((r) => r === 'parent').length === 1)
                  return { kind: 'awaitChildren', children: [child(job, 'slow')] };
                return done;
              },
              runtime: async () => {
                childRunning = true;
                await gate.promise;
                return done;
              },
            }),
          );
          await queue.enqueue(parent);
          expect(await eventually(() => childRunning)).toBe(true);
          await queue.enqueue(next);
          await sleep(300);
          expect(runs).toEqual(['parent']);
          expect(await held(queue)).toBe(1);
          gate.resolve();
          expect(await eventually(() => runs.length === 3)).toBe(true);
          expect(runs).toEqual(['parent', 'parent', 'next']);
        },
        TEST_TIMEOUT_MS,
      );

      it(
        "a held job's wait (the metrics) counts from its enqueue, its held time included",
        async () => {
          const waits: number[] = [];
          const queue = create(2, ({ queue, waitedMs }) => queue === 'covel-turns' && waits.push(waitedMs), { window: 1 });
          const [first, second] = [turnJob(), turnJob()];
          const gate = deferred();
          queue.consume(handlers({ turn: async (job) => (job.executionId === first.executionId && (await gate.promise), done) }));
          await queue.enqueue(first);
          await queue.enqueue(second);
          expect(await eventually(() => waits.length === 1)).toBe(true);
          await sleep(400);
          gate.resolve();
          expect(await eventually(() => waits.length === 2)).toBe(true);
          expect(waits[1]).toBeGreaterThanOrEqual(350);
        },
        TEST_TIMEOUT_MS,
      );

      it(
        'a retried turn job keeps its place; one failed for good (permanently, or out of attempts) gives it to the next',
        async () => {
          const queue = create(1, undefined, { window: 1 });
          const [broken, exhausted, next] = [turnJob(), turnJob(), turnJob()];
          const name = new Map([
            [broken.executionId, 'broken'],
            [exhausted.executionId, 'exhausted'],
            [next.executionId, 'next'],
          ]);
          const runs: string[] = [];
          for (const job of [broken, exhausted, next]) await queue.enqueue(job);
          queue.consume(
            handlers({
              turn: async (job, ctx) => {
                const who = name.get(job.executionId)!;
                runs.push(`${who}${ctx.attemptsMade}`);
                if (who === 'broken' && ctx.attemptsMade === 0) throw new UnavailableError('database', 'try again');
                if (who === 'broken') throw new NotFoundError('THING_NOT_FOUND', 'retrying cannot fix this');
                if (who === 'exhausted') throw new UnavailableError('database', 'still down');
                return done;
              },
            }),
          );
          expect(await eventually(() => runs.includes('next0'))).toBe(true);
          expect(runs).toEqual(['broken0', 'broken1', 'exhausted0', 'exhausted1', 'exhausted2', 'next0']);
        },
        TEST_TIMEOUT_MS,
      );
    });

    describe('with tracing on', () => {
      let tracing: TestTracing;
      beforeAll(async () => {
        tracing = await startTracingForTests();
      });
      afterAll(() => tracing.shutdown());

      it(
        'a turn job carries the trace context of the span that enqueued it (in every run, after a claim), a runtime job the one its turn job gave it; a job enqueued outside a span carries none',
        async () => {
          const queue = create(2);
          const traced = turnJob();
          const plain = turnJob();
          const given: TraceCarrier = { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01', tracestate: 'covel=1' };
          const turnRuns: { executionId: string; trace: TraceCarrier | undefined; claimedAttempt: number | null }[] = [];
          const runtimeTraces: (TraceCarrier | undefined)[] = [];
          const ended = deferred();
          const plainRan = deferred();
          queue.consume({
            turn: async (job, ctx): Promise<TurnStep> => {
              turnRuns.push({ executionId: job.executionId, trace: job.trace, claimedAttempt: claimed(job, ctx) });
              if (job.executionId === plain.executionId) {
                plainRan.resolve();
                return done;
              }
              if (claimed(job, ctx) === null) {
                await claim(job, ctx, 1);
                return { kind: 'awaitChildren', children: [{ ...child(turnJobOnly(job), 'one'), trace: given }] };
              }
              ended.resolve();
              return done;
            },
            runtime: async (job) => {
              runtimeTraces.push(job.trace);
              return done;
            },
          });
          let traceparent = '';
          await inSpan('enqueue', {}, async (span) => {
            traceparent = `00-${span.spanContext().traceId}-${span.spanContext().spanId}-01`;
            await queue.enqueue(traced);
          });
          await queue.enqueue(plain);
          // both jobs ran (no order between them: the traced job's three runs may all end before the plain one's enqueue does)
          await Promise.all([ended.promise, plainRan.promise]);
          const runsOf = (job: TurnJob) => turnRuns.filter((r) => r.executionId === job.executionId).map(({ executionId: _, ...run }) => run);
          expect(runsOf(traced)).toEqual([
            { trace: { traceparent }, claimedAttempt: null },
            { trace: { traceparent }, claimedAttempt: 1 },
          ]);
          expect(runtimeTraces).toEqual([given]);
          expect(runsOf(plain)).toEqual([{ trace: undefined, claimedAttempt: null }]);
        },
        TEST_TIMEOUT_MS,
      );
    });
  });
}

/** A turn job without its trace context (a child made from it must not inherit it by accident). */
const turnJobOnly = ({ executionId, sessionId, tenantId }: TurnJob): TurnJob => ({ executionId, sessionId, tenantId });
