import { type MonitoredCommand, RedisMonitor } from '../support/redis-monitor';
import { type RedisChild, startRedisChild } from '../support/redis-server';
import { startStack, type Stack } from '../support/stack';

const TURNS = 10;
/**
 * The queue's top-level Redis commands per narrator-only turn (fair admission, BullMQ's scripts,
 * BZPOPMIN; a script is one): 24 when the narrator ran as a child job (a second hop through the
 * runtime queue and a second run of the turn job), 10 with it inline, 8 once a fetch that finds
 * nothing removes the marker its taking of the job left (`fetch.ts`: no wake on it, no second empty
 * fetch), 7 with the API's admission and the add of its turn job in one script call (`admit-add.ts`).
 * Left out: what comes with time, not with turns (stalled-job checks, lock renewals, the consumers'
 * tick, the idle queues' BZPOPMIN timing out).
 */
const QUEUE_COMMANDS_PER_TURN = 8;

/** Commands a consumer makes every so often whatever runs: the stalled-job checks, lock renewals, its tick, the polls of its idle queues. */
const periodic = (c: MonitoredCommand) =>
  ['evalsha moveStalledJobsToWait', 'evalsha extendLocks', 'evalsha covelFairTick'].includes(c.name) ||
  (['bzpopmin', 'evalsha moveToActive'].includes(c.name) && c.args.some((a) => /:covel-(runtimes|worlds):/.test(a)));

/**
 * Issue 33: Redis commands per narrator-only turn, counted with MONITOR on a private redis-server
 * (every client of the stack is seen, nothing else is), the API and one worker as their own
 * processes. Counts, not times.
 */
describe('Redis commands of a turn, narrator-only or Emberback (PostgreSQL + BullMQ)', () => {
  let redis: RedisChild;
  let stack: Stack;
  beforeAll(async () => {
    redis = await startRedisChild();
    // each model call waits 600 ms: a session's next input, posted right after the one before, is
    // queued before that turn ends (the hand-off below), however fast a turn runs or slow a POST is
    stack = await startStack({ workers: 1, env: { REDIS_URL: redis.url, COVEL_EMULATOR_DELAY_MS: '600' } });
  }, 120_000);
  afterAll(async () => {
    await stack?.stop();
    await redis?.kill();
  }, 60_000);

  /**
   * The queue's commands (the periodic ones left out) while a new session, warmed up by one turn
   * (connections made, scripts loaded), plays `turns` more, each released; logged by name, per turn.
   */
  async function queueCommandsOfTurns(options: { kind: string; session: { worldId?: string }; turns: number; input: (i: number) => string; waitMs: number }) {
    const { client } = stack;
    const { id } = await client.createSession(options.session);
    const monitor = await RedisMonitor.start(redis.url);
    let seen: MonitoredCommand[];
    let counted = 0;
    try {
      // the warm-up's release follows its job's end, a moment after the commit: counting starts once
      // it is seen, else a loaded machine counts it (and misses the last turn's) and a count reads off
      const warmUp = await client.submit(id, 'warm up');
      expect(await client.waitFor(warmUp.executionId, options.waitMs)).toBe('committed');
      await monitor.until((commands) =>
        commands.some((c) => ['eval covelFairRelease', 'evalsha covelFairRelease'].includes(c.name) && c.args.includes(warmUp.executionId)),
      );
      counted = monitor.commands.length;
      for (let i = 0; i < options.turns; i++) {
        const { executionId } = await client.submit(id, options.input(i));
        expect(await client.waitFor(executionId, options.waitMs)).toBe('committed');
      }
      // the release follows the turn job's end (its `completed` event), a moment after the commit
      await monitor.until((commands) => commands.slice(counted).filter((c) => c.name === 'evalsha covelFairRelease').length >= options.turns);
    } finally {
      seen = monitor.seen().slice(counted);
      monitor.stop();
    }
    const queue = seen.filter((c) => c.area === 'queue' && !periodic(c));
    console.log(
      `queue commands per ${options.kind} turn (${options.turns} turns): ${(queue.length / options.turns).toFixed(1)}\n` +
        RedisMonitor.byName(queue)
          .map(([name, n]) => `  ${(n / options.turns).toFixed(1)}  ${name}`)
          .join('\n'),
    );
    return {
      queue,
      count: (name: string, key = '') => queue.filter((c) => c.name === name && c.args.some((a) => a.includes(key))).length,
    };
  }

  it(`the queue issues at most ${QUEUE_COMMANDS_PER_TURN} a turn: no runtime job, no second run of the turn job`, async () => {
    const { queue, count } = await queueCommandsOfTurns({ kind: 'narrator-only', session: {}, turns: TURNS, input: (i) => `input ${i}`, waitMs: 60_000 });
    // one turn job each, admitted and added by one call and released once; no runtime job, no wait for children
    expect(count('evalsha covelFairAdmitAdd')).toBe(TURNS);
    expect(count('evalsha covelFairAdmit')).toBe(0);
    expect(count('evalsha addStandardJob', ':covel-turns:')).toBe(0);
    expect(count('evalsha addStandardJob', ':covel-runtimes:')).toBe(0);
    expect(count('evalsha moveToWaitingChildren')).toBe(0);
    expect(count('evalsha moveToFinished', ':covel-turns:')).toBe(TURNS);
    expect(count('evalsha covelFairRelease')).toBe(TURNS);
    expect(queue.length).toBeLessThanOrEqual(QUEUE_COMMANDS_PER_TURN * TURNS);
  }, 180_000);

  it('an Emberback turn with every plugin runs its stages of several runtimes inline: no runtime job, no wait for children', async () => {
    const turns = 3;
    const { queue, count } = await queueCommandsOfTurns({
      kind: 'Emberback',
      session: { worldId: 'emberback' },
      turns,
      input: (i) => `look around ${i}`,
      waitMs: 120_000,
    });
    // each stage's runtimes (the post-turn stage: nine) run in the turn job's one run
    expect(count('evalsha addStandardJob', ':covel-runtimes:')).toBe(0);
    expect(count('evalsha moveToWaitingChildren')).toBe(0);
    expect(count('evalsha moveToFinished', ':covel-turns:')).toBe(turns);
    expect(queue.length).toBeLessThanOrEqual(QUEUE_COMMANDS_PER_TURN * turns);
  }, 240_000);

  it("a session's next input rides on its turn job's release: no admission call of its own", async () => {
    const { client } = stack;
    const { id } = await client.createSession();
    const monitor = await RedisMonitor.start(redis.url);
    let seen: MonitoredCommand[];
    const inputs: { executionId: string }[] = [];
    try {
      // posted one after the other: the first turn's end hands off to the second, the second's to the third
      for (const text of ['one', 'two', 'three']) inputs.push(await client.submit(id, text));
      for (const input of inputs) expect(await client.waitFor(input.executionId, 60_000)).toBe('committed');
      await monitor.until((commands) => commands.filter((c) => c.name === 'evalsha covelFairRelease').length >= inputs.length);
    } finally {
      seen = monitor.seen();
      monitor.stop();
    }
    const releases = seen.filter((c) => c.name === 'evalsha covelFairRelease');
    const admits = seen.filter((c) => c.name === 'evalsha covelFairAdmitAdd' || c.name === 'evalsha covelFairAdmit');
    // each hand-off is the release's (the execution released, then the next one admitted)
    for (const [ended, next] of [
      [inputs[0], inputs[1]],
      [inputs[1], inputs[2]],
    ])
      expect(releases.filter((r) => r.args.includes(ended.executionId) && r.args.includes(next.executionId))).toHaveLength(1);
    // only the API's enqueues admit on their own (one per input, whatever the session's head was then)
    expect(admits.length).toBeLessThanOrEqual(inputs.length);
    expect((await client.messages(id)).map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant', 'user', 'assistant']);
  }, 180_000);
});
