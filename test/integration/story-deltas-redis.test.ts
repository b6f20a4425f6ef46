import IORedis from 'ioredis';
import { DELTA_MAX_CHARS, DELTA_WINDOW_MS } from '../../libs/engine';
import { ProviderEmulator } from '../../libs/emulator';
import { type GatedProvider, startGatedProvider } from '../support/gated-provider';
import { openMonitor } from '../support/redis-monitor';
import { openEventStream, type ReceivedEvent } from '../support/sse-client';
import { REDIS_URL, type Stack, startStack } from '../support/stack';

/** A top-level Redis command of the delta bus, as MONITOR saw it (a script's own commands are not counted). */
interface Seen {
  at: number;
  command: string;
  args: string[];
}

const storyText = (committed: ReceivedEvent) =>
  (committed.data.messages as { role: string; outputKind: string | null; text: string }[])
    .filter((m) => m.role === 'assistant' && m.outputKind === 'story')
    .map((m) => m.text)
    .join('');

/** Between the API and the model's last chunk the emulator writes one chunk every 10 ms: a stream long enough to coalesce. */
const CHUNK_DELAY_MS = 10;

/**
 * The delta bus on Redis, counted with MONITOR: a turn nobody streams costs one delta command (the
 * worker reads the session's listened mark once, then trusts its view of it for a while: see
 * delta-listeners-redis.test.ts); a streamed one publishes coalesced deltas (one command each, at
 * most one per 50 ms window or 400 characters) that concatenate to the reply, numbered without a
 * gap; a stream that opens mid-call gets the text written so far as its first delta.
 */
describe('story deltas on Redis: only while someone listens, coalesced', () => {
  let emulator: ProviderEmulator;
  let gate: GatedProvider;
  let stack: Stack;
  let client: IORedis;
  let monitor: IORedis;
  const seen: Seen[] = [];

  beforeAll(async () => {
    emulator = await new ProviderEmulator({ chunkDelayMs: CHUNK_DELAY_MS }).start();
    gate = await startGatedProvider(emulator.url);
    stack = await startStack({ workers: 1, env: { COVEL_EMULATOR_URL: gate.url } });
    const prefix = stack.env.COVEL_QUEUE_PREFIX;
    client = new IORedis(REDIS_URL, { enableReadyCheck: false });
    monitor = await openMonitor(client);
    monitor.on('monitor', (time: string, args: string[], source: string) => {
      if (source === 'lua') return; // inside a script: the script is the one command
      if (!args.some((a) => a.startsWith(`${prefix}:deltas`) || a.startsWith(`${prefix}:delta-`))) return;
      seen.push({ at: Number(time) * 1000, command: String(args[0]).toLowerCase(), args });
    });
  }, 120_000);

  afterAll(async () => {
    monitor?.disconnect();
    client?.disconnect();
    await stack?.stop();
    await gate?.close();
    await emulator?.stop();
  });

  const newSession = async () => (await stack.client.createSession({ worldId: 'emberback', plugins: ['narrator'] })).id;
  /** The script runs that pushed deltas (EVALSHA, or EVAL the first time), by call key. */
  const pushes = (from: number) =>
    seen.slice(from).filter((s) => (s.command === 'evalsha' || s.command === 'eval') && s.args.some((a) => a.includes(':deltas:call:')));
  const settle = () => new Promise((r) => setTimeout(r, 300)); // MONITOR's lines arrive after the answers

  it('nobody streams the session: one delta command for the turn (the listened check, whatever its model calls), nothing published', async () => {
    const sessionId = await newSession();
    const from = seen.length;
    const calls = emulator.requests.length;
    const { executionId } = await stack.client.submit(sessionId, 'Look around');
    expect(await stack.client.waitFor(executionId, 30_000)).toBe('committed');
    await settle();
    const modelCalls = emulator.requests.length - calls;
    const mine = seen.slice(from).filter((s) => s.command !== 'subscribe'); // the worker's subscription to listeners: once per process
    expect(modelCalls).toBeGreaterThan(0);
    expect(mine.map((s) => s.command)).toEqual(['exists']); // a new session: its mark read once, then the worker's view holds
    expect(pushes(from)).toEqual([]);
  }, 60_000);

  it('a streamed turn: coalesced deltas, seq 1..n, their text the reply, the last before the commit; one command each', async () => {
    const sessionId = await newSession();
    const stream = await openEventStream(stack.client, sessionId);
    const from = seen.length;
    const { executionId } = await stack.client.submit(sessionId, 'Look around');
    const committed = await stream.until((e) => e.type === 'committed' && e.data.executionId === executionId);
    await settle();
    const deltas = stream.events.filter((e) => e.type === 'delta' && e.data.executionId === executionId);
    expect(deltas.map((d) => d.data.seq)).toEqual(deltas.map((_, i) => i + 1));
    expect(
      deltas
        .map((d) => d.data.text)
        .join('')
        .trim(),
    ).toBe(storyText(committed).trim());
    expect(stream.events.indexOf(deltas.at(-1)!)).toBeLessThan(stream.events.indexOf(committed));
    // one script per delta and one at the call's end (the rest, or only the list's grace)
    const pushed = pushes(from);
    expect(pushed.length).toBeLessThanOrEqual(deltas.length + 1);
    expect(pushed.length).toBeGreaterThanOrEqual(deltas.length);
    const texts = deltas.map((d) => String(d.data.text));
    const bursts = texts.filter((t) => t.length >= DELTA_MAX_CHARS).length;
    // as Redis saw them (arrival times, up to 100 ms apart from when they were sent): at most one per window,
    // besides the bursts of DELTA_MAX_CHARS, the catch-up and the call's last piece
    const span = pushed.at(-1)!.at - pushed[0].at;
    expect(pushed.length).toBeLessThanOrEqual(Math.floor((span + 100) / DELTA_WINDOW_MS) + 2 + bursts);
    // the stream's announcement tells the worker (no read), unless the turn's call comes before it (one read)
    const listened = seen.slice(from).filter((s) => s.command === 'exists');
    expect(listened.length).toBeLessThanOrEqual(1);
    stream.close();
  }, 60_000);

  it('a stream that opens mid-call: the text so far as its first delta, then the rest; each piece once, in order', async () => {
    const sessionId = await newSession();
    const from = seen.length;
    const hold = gate.holdNext(8);
    const { executionId } = await stack.client.submit(sessionId, 'Look around');
    await hold.reached;
    await settle();
    expect(pushes(from)).toEqual([]); // nobody listened: nothing published so far
    const stream = await openEventStream(stack.client, sessionId);
    const first = await stream.until((e) => e.type === 'delta' && e.data.executionId === executionId);
    expect(first.data.seq).toBe(1);
    expect(String(first.data.text).length).toBeGreaterThan(0); // written before the stream opened
    hold.release();
    const committed = await stream.until((e) => e.type === 'committed' && e.data.executionId === executionId);
    const deltas = stream.events.filter((e) => e.type === 'delta' && e.data.executionId === executionId);
    expect(deltas.map((d) => d.data.seq)).toEqual(deltas.map((_, i) => i + 1));
    expect(
      deltas
        .map((d) => d.data.text)
        .join('')
        .trim(),
    ).toBe(storyText(committed).trim());
    expect(stream.events.indexOf(deltas.at(-1)!)).toBeLessThan(stream.events.indexOf(committed));
    stream.close();
  }, 60_000);
});
