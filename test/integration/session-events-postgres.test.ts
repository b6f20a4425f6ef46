import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { PlayClient } from '../../apps/play/play-client';
import { ProviderEmulator } from '../../libs/emulator';
import { type GatedProvider, startGatedProvider } from '../support/gated-provider';
import { openEventStream, type ReceivedEvent } from '../support/sse-client';
import { freePort, type ManagedProcess, type Stack, startApp, startStack } from '../support/stack';

const ids = (events: ReceivedEvent[]) => events.map((e) => e.id);
const upTo = (events: ReceivedEvent[], last: ReceivedEvent) => events.slice(0, events.indexOf(last) + 1);

/**
 * PostgreSQL + Redis, two API processes and a worker process: the worker's story deltas reach
 * both APIs through Redis pub/sub, and a stream begun on one API resumes on the other with
 * `Last-Event-ID`, missing nothing and repeating nothing.
 */
describe('session event stream across API processes (PostgreSQL + Redis)', () => {
  let emulator: ProviderEmulator;
  let gate: GatedProvider;
  let stack: Stack;
  let secondApi: ManagedProcess;
  let second: PlayClient;

  beforeAll(async () => {
    emulator = await new ProviderEmulator().start();
    gate = await startGatedProvider(emulator.url);
    stack = await startStack({ workers: 1, env: { COVEL_EMULATOR_URL: gate.url } });
    const port = await freePort();
    secondApi = await startApp('api 2', 'apps/api/main.ts', { ...stack.env, PORT: String(port) }, /listening on/);
    second = new PlayClient(`http://127.0.0.1:${port}`, stack.apiKey);
  }, 120_000);

  afterAll(async () => {
    await secondApi?.stop();
    await stack?.stop();
    await gate?.close();
    await emulator?.stop();
  });

  it('a stream begun on one API resumes mid-turn on another, each event once', async () => {
    const first = stack.client;
    const { id } = await first.createSession({ worldId: 'emberback' });
    const whole = await openEventStream(second, id);
    const hold = gate.holdNext(4);
    const begun = await openEventStream(first, id);
    const { executionId } = await first.submit(id, 'Look around');
    await hold.reached;
    // the worker's deltas reach the first API through Redis while the model is still writing
    await begun.until((e) => e.type === 'delta' && e.data.executionId === executionId);
    begun.close();
    const lastId = begun.events.at(-1)!.id!;
    expect(lastId).toMatch(/^\d+-\d+$/);
    hold.release();
    const resumed = await openEventStream(second, id, lastId);
    const end = await resumed.until((e) => e.type === 'committed' && e.data.executionId === executionId);
    const wholeEnd = await whole.until((e) => e.type === 'committed' && e.data.executionId === executionId);
    expect([...ids(begun.events), ...ids(upTo(resumed.events, end))]).toEqual(ids(upTo(whole.events, wholeEnd)));
    const deltas = whole.events.filter((e) => e.type === 'delta');
    // coalesced (one per 50 ms): at least the one sent while the model was paused, and the rest after it
    expect(deltas.length).toBeGreaterThanOrEqual(2);
    expect(deltas.map((d) => d.data.seq)).toEqual(deltas.map((_, i) => i + 1));
    for (const s of [whole, resumed]) s.close();
  }, 60_000);

  it('a stream that left mid-call and resumes (on another API) after the turn committed still gets the rest of that call, each event once', async () => {
    const first = stack.client;
    const { id } = await first.createSession({ worldId: 'emberback' });
    const whole = await openEventStream(second, id);
    const hold = gate.holdNext(4);
    const begun = await openEventStream(first, id);
    const { executionId } = await first.submit(id, 'Look around');
    await hold.reached;
    await begun.until((e) => e.type === 'delta' && e.data.executionId === executionId);
    begun.close();
    const lastId = begun.events.at(-1)!.id!;
    expect(lastId).toMatch(/^\d+-\d+$/);
    hold.release();
    // the call ends (and the turn commits) before the client is back: what the CI run met by chance
    const wholeEnd = await whole.until((e) => e.type === 'committed' && e.data.executionId === executionId);
    const resumed = await openEventStream(second, id, lastId);
    const end = await resumed.until((e) => e.type === 'committed' && e.data.executionId === executionId);
    expect([...ids(begun.events), ...ids(upTo(resumed.events, end))]).toEqual(ids(upTo(whole.events, wholeEnd)));
    expect(resumed.events.filter((e) => e.type === 'delta').length).toBeGreaterThan(0);
    for (const s of [whole, resumed]) s.close();
  }, 60_000);

  it("another tenant's session is a 404 on either API", async () => {
    const { id } = await stack.client.createSession({});
    // not execFileSync: a loop blocked for the CLI's seconds misses the API closing its idle keep-alive
    // socket, and the next fetch goes out on that dead socket ("other side closed")
    const { stdout: created } = await promisify(execFile)(process.execPath, ['-r', './tools/register.js', 'tools/tenant-create.ts', 'intruder'], {
      env: { ...process.env, ...stack.env },
      encoding: 'utf8',
    });
    const apiKey = /cvl_[A-Za-z0-9_-]+/.exec(created)?.[0];
    expect(apiKey).toBeDefined();
    for (const baseUrl of [stack.baseUrl, second.baseUrl]) {
      expect((await openEventStream(new PlayClient(baseUrl, apiKey!), id)).status).toBe(404);
    }
  }, 60_000);
});
