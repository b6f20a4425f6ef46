import IORedis from 'ioredis';
import { RedisDeltaBus, type StoryDelta } from '../../libs/engine';
import { type MonitoredCommand, RedisMonitor } from '../support/redis-monitor';
import { type RedisChild, startRedisChild } from '../support/redis-server';
import { until } from '../support/until';

const PREFIX = 'covel-listeners';
/** The worker's view of a session's listeners holds this long (short: the test waits it out once). */
const CHECK_MS = 1_500;
const quiet = { warn: () => undefined, log: () => undefined };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Who listens to a session's story deltas, as a worker knows it (issue 33): the worker keeps a view
 * from the announcements of new listeners and reads a session's mark only when the view has nothing
 * young enough on it, so a session nobody listens to costs one EXISTS per `listenedCheckMs` per
 * worker whatever its model calls (it was one per call), and a listener that comes is still served at
 * once, mid-call too. Two buses (the API's, the worker's) on a private redis-server, counted with
 * MONITOR; its subscriber connection killed to show the view is dropped with it.
 */
describe('delta listeners on Redis: a per-process view, announcements, one read per window', () => {
  let redis: RedisChild;
  let api: RedisDeltaBus;
  let worker: RedisDeltaBus;
  let monitor: RedisMonitor;
  let call = 0;

  beforeAll(async () => {
    redis = await startRedisChild();
    monitor = await RedisMonitor.start(redis.url);
    api = new RedisDeltaBus({ redisUrl: redis.url, prefix: PREFIX, logger: quiet });
    worker = new RedisDeltaBus({ redisUrl: redis.url, prefix: PREFIX, logger: quiet, listenedCheckMs: CHECK_MS });
  }, 60_000);
  afterAll(async () => {
    monitor?.stop();
    await worker?.close();
    await api?.close();
    await redis?.kill();
  }, 60_000);

  /** The reads of a session's listened mark seen so far. */
  const reads = (sessionId: string, commands: readonly MonitoredCommand[] = monitor.commands) =>
    commands.filter((c) => c.name === 'exists' && c.args.includes(`${PREFIX}:deltas:listened:${sessionId}`)).length;
  /** A model call of the worker: `parts` written, then ended. */
  const modelCall = async (sessionId: string, parts: string[]) => {
    const deltas = worker.open({ sessionId, callId: `call-${++call}` });
    for (const part of parts) deltas.write(part);
    await deltas.end();
  };
  /**
   * Waits until a read of the session's mark since `from` is seen. A call does not wait for its read
   * (it goes out once the worker's subscriber has subscribed to the announcements: on a loaded machine
   * more than `settle`'s moment after the first calls ended); `settle` then shows there was no second.
   */
  const readSeen = (sessionId: string, from: number) => until(() => reads(sessionId, monitor.commands.slice(from)) >= 1, `a read of ${sessionId}'s mark`);
  /** Lets the checks under way go out (a moment), then every MONITOR line of what the server ran so far come in. */
  const settle = async () => {
    await sleep(200);
    await monitor.flushed();
  };

  it('nobody listens: ten model calls of a session read its mark once, and publish nothing', async () => {
    const from = monitor.commands.length;
    // five at once (a stage's runtimes), then five one after the other: one read for all of them
    await Promise.all(Array.from({ length: 5 }, () => modelCall('quiet', ['text'])));
    for (let i = 0; i < 5; i++) await modelCall('quiet', ['text']);
    await readSeen('quiet', from);
    await settle();
    const mine = monitor.commands.slice(from);
    expect(reads('quiet', mine)).toBe(1);
    expect(mine.filter((c) => c.area === 'deltas' && c.name.startsWith('eval'))).toEqual([]); // no delta pushed
  });

  it('past the window the mark is read again: at most one read per window', async () => {
    await sleep(CHECK_MS + 100);
    const from = monitor.commands.length;
    for (let i = 0; i < 3; i++) await modelCall('quiet', ['text']);
    await readSeen('quiet', from);
    await settle();
    expect(reads('quiet', monitor.commands.slice(from))).toBe(1);
  });

  it('a listener that comes after "nobody" is served at once (its announcement), with no read', async () => {
    await modelCall('late', ['before']);
    await readSeen('late', 0);
    await settle();
    expect(reads('late')).toBe(1); // the view now says nobody listens
    const heard: StoryDelta[] = [];
    const unsubscribe = await api.subscribe('late', (d) => heard.push(d));
    await settle(); // the announcement reaches the worker's subscriber a moment later
    const from = monitor.commands.length;
    await modelCall('late', ['Hello ', 'there']);
    await until(() => heard.map((d) => d.text).join('') === 'Hello there', 'the deltas of the call');
    expect(heard.map((d) => d.seq)).toEqual(heard.map((_, i) => i + 1));
    await settle();
    expect(reads('late', monitor.commands.slice(from))).toBe(0);
    await unsubscribe();
  });

  it('mid-call: a call begun while nobody listened publishes what it has once the listener comes', async () => {
    await modelCall('mid', ['first call']);
    await readSeen('mid', 0);
    await settle();
    const deltas = worker.open({ sessionId: 'mid', callId: `call-${++call}` });
    deltas.write('so far, ');
    const heard: StoryDelta[] = [];
    const unsubscribe = await api.subscribe('mid', (d) => heard.push(d));
    await until(() => heard.length > 0, 'the catch-up');
    expect(heard[0]).toMatchObject({ seq: 1, text: 'so far, ' });
    deltas.write('and the rest');
    await deltas.end();
    await until(() => heard.map((d) => d.text).join('') === 'so far, and the rest', 'the rest');
    await settle();
    expect(reads('mid')).toBe(1); // the first call's; the second call trusted the view, the announcement started it
    await unsubscribe();
  });

  it('the subscriber connection lost: the view is dropped, the announcements subscribed again, the mark read again', async () => {
    await modelCall('dropped', ['x']);
    await readSeen('dropped', 0);
    await settle();
    expect(reads('dropped')).toBe(1);
    // the worker's subscriber: the one connection that subscribed to the announcements
    const sources = new Set(monitor.commands.filter((c) => c.name === 'subscribe' && c.args.includes(`${PREFIX}:delta-listeners`)).map((c) => c.source));
    expect(sources.size).toBe(1);
    const admin = new IORedis(redis.url);
    try {
      await admin.client('KILL', 'ADDR', [...sources][0]);
    } finally {
      admin.disconnect();
    }
    await sleep(300); // the close is heard; ioredis connects again
    const from = monitor.commands.length;
    await modelCall('dropped', ['y']);
    await readSeen('dropped', from);
    await settle();
    const after = monitor.commands.slice(from);
    expect(reads('dropped', after)).toBe(1);
    expect(after.filter((c) => c.name === 'subscribe' && c.args.includes(`${PREFIX}:delta-listeners`)).length).toBeGreaterThanOrEqual(1);
    // and a listener announced from here on is heard as before
    const heard: StoryDelta[] = [];
    const unsubscribe = await api.subscribe('dropped', (d) => heard.push(d));
    await settle();
    await modelCall('dropped', ['heard']);
    await until(() => heard.map((d) => d.text).join('') === 'heard', 'the deltas after the reconnect');
    await unsubscribe();
  });
});
