import type { INestApplication } from '@nestjs/common';
import { createApiApp } from '../../apps/api/create-api-app';
import { SessionEvents } from '../../apps/api/session-events/session-events.service';
import { SessionFeed } from '../../apps/api/session-events/session-feed';
import { StreamCounts } from '../../apps/api/session-events/stream-counts';
import { PlayClient } from '../../apps/play/play-client';
import { type EmbeddedEngine, startEmbedded } from '../support/embedded';
import { type OpenStream, openEventStream, openStreamAt } from '../support/sse-client';

const eventsPath = (id: string, query = '') => `/v1/sessions/${id}/events${query}`;

/** Waits (bounded) until `check` holds; the assertion that follows says what was expected. */
async function eventually(check: () => boolean, limitMs = 10_000): Promise<void> {
  const until = Date.now() + limitMs;
  while (!check() && Date.now() < until) await new Promise((r) => setTimeout(r, 25));
}

/**
 * Idle event streams on the embedded default (PGlite, in-process notifications): where a stream
 * starts without `Last-Event-ID` (the latest committed turn) or with `?from=`, that an idle one
 * reads nothing until an append wakes it, the per-tenant cap (429), and that a closed one leaves
 * no feed, count or subscription behind.
 */
describe('session event streams: start, wakes, caps, release', () => {
  let covel: EmbeddedEngine;
  let api: INestApplication;
  let baseUrl: string;
  let player: PlayClient;
  let session: string;
  /** Positions (ids) of the two committed turns of `session`. */
  let commits: string[];
  let opening: string;

  const tenant = async (name: string) => new PlayClient(baseUrl, (await covel.engine.tenants.create(name)).apiKey);

  beforeAll(async () => {
    covel = await startEmbedded({ COVEL_STREAMS_PER_TENANT: '3', COVEL_STREAMS_PER_KEY: '4' });
    // an API of its own on the engine (default timings: a session stream's safety poll is 30 s), to read its registry
    api = await createApiApp(covel.engine, { logger: false });
    await api.listen(0, '127.0.0.1');
    baseUrl = (await api.getUrl()).replace('[::1]', '127.0.0.1');
    player = await tenant('idle');
    session = (await player.createSession({ worldId: 'emberback' })).id;
    const whole = await openStreamAt(player, eventsPath(session, '?from=start'));
    for (const text of ['Look around', 'Walk to the river']) {
      const { executionId } = await player.submit(session, text);
      expect(await player.waitFor(executionId, 60_000)).toBe('committed');
    }
    await whole.until((e) => e.type === 'committed' && whole.events.filter((c) => c.type === 'committed').length === 2);
    commits = whole.events.filter((e) => e.type === 'committed').map((e) => e.id!);
    opening = whole.events.find((e) => e.type === 'opening')!.id!;
    whole.close();
  }, 120_000);

  afterAll(async () => {
    await api?.close();
    await covel?.stop();
  });

  it('a stream without Last-Event-ID or ?from starts at the latest committed turn, then gets what is new', async () => {
    const stream = await openEventStream(player, session, undefined, baseUrl);
    expect(stream.status).toBe(200);
    const first = await stream.until(() => true);
    expect(first).toMatchObject({ id: commits[1], type: 'committed' });
    const { executionId } = await player.submit(session, 'Rest by the fire');
    await stream.until((e) => e.type === 'committed' && e.data.executionId === executionId);
    expect(stream.events.some((e) => e.id !== undefined && !e.id.includes('-') && Number(e.id) < Number(commits[1]))).toBe(false);
    expect(stream.events.filter((e) => e.data.executionId === executionId).map((e) => e.type)).toEqual(expect.arrayContaining(['status', 'committed']));
    stream.close();
  }, 60_000);

  it('?from=start and ?from=0 replay the session from its opening; ?from=<id> starts at that event; a bad one is a 400 naming from', async () => {
    for (const from of ['start', '0']) {
      const stream = await openStreamAt(player, eventsPath(session, `?from=${from}`), undefined, baseUrl);
      await stream.until((e) => e.id === commits[1]);
      expect(stream.events[0]).toMatchObject({ id: opening, type: 'opening' });
      stream.close();
    }
    const fromFirst = await openStreamAt(player, eventsPath(session, `?from=${commits[0]}`), undefined, baseUrl);
    await fromFirst.until((e) => e.id === commits[1]);
    expect(fromFirst.events[0]).toMatchObject({ id: commits[0], type: 'committed' });
    fromFirst.close();
    // Last-Event-ID wins over from (a reconnecting EventSource sends it with the URL it opened)
    const resumed = await openStreamAt(player, eventsPath(session, '?from=0'), commits[0], baseUrl);
    const next = await resumed.until(() => true);
    expect(Number(next.id)).toBeGreaterThan(Number(commits[0]));
    resumed.close();
    const bad = await fetch(`${baseUrl}${eventsPath(session, '?from=yesterday')}`, { headers: player.authHeaders() });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ issues: [{ path: 'from' }] });
  }, 60_000);

  it('an idle stream reads nothing from the log until an append (another request) wakes it', async () => {
    const reads = jest.spyOn(covel.engine.store, 'readLog');
    const ofSession = () => reads.mock.calls.filter(([, , options]) => options?.streamId === session).length;
    try {
      const stream = await openEventStream(player, session, undefined, baseUrl);
      await stream.until((e) => e.type === 'committed');
      await new Promise((r) => setTimeout(r, 200)); // its last (empty) read, then idle
      const before = ofSession();
      await new Promise((r) => setTimeout(r, 3_000));
      expect(ofSession()).toBe(before); // polling every 500 ms would have read ~6 times
      // the default safety poll is 30 s: an event arriving well before it was woken by the append
      const { executionId } = await player.submit(session, 'Listen to the river');
      await stream.until((e) => e.type === 'status' && e.data.executionId === executionId);
      expect(ofSession()).toBeGreaterThan(before);
      await stream.until((e) => e.type === 'committed' && e.data.executionId === executionId);
      stream.close();
    } finally {
      reads.mockRestore();
    }
  }, 25_000);

  it("caps a tenant's open streams (429 TOO_MANY_STREAMS with Retry-After); another tenant is not affected; a closed one frees its place", async () => {
    const open: OpenStream[] = [];
    for (let i = 0; i < 3; i++) open.push(await openEventStream(player, session, undefined, baseUrl));
    expect(open.map((s) => s.status)).toEqual([200, 200, 200]);
    const refused = await fetch(`${baseUrl}${eventsPath(session)}`, { headers: { ...player.authHeaders(), accept: 'text/event-stream' } });
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('5');
    expect(await refused.json()).toMatchObject({ code: 'TOO_MANY_STREAMS', message: expect.stringContaining('COVEL_STREAMS_PER_TENANT') });
    const other = await tenant('other');
    const theirs = await openEventStream(other, (await other.createSession({})).id, undefined, baseUrl);
    expect(theirs.status).toBe(200);
    open.pop()!.close();
    const registry = api.get(SessionEvents);
    await eventually(() => registry.open.feeds === 3);
    const again = await openEventStream(player, session, undefined, baseUrl);
    expect(again.status).toBe(200);
    for (const s of [...open, theirs, again]) s.close();
  }, 30_000);

  it('a closed stream leaves nothing behind: no feed in the registry, no count, no append subscription', async () => {
    const registry = api.get(SessionEvents);
    await eventually(() => registry.open.feeds === 0);
    // the engine's own: its async projector waits for every stream's appends (one subscription)
    const engineOwn = covel.engine.appends.size;
    expect(engineOwn).toBe(1);
    const streams = await Promise.all([1, 2, 3].map(() => openEventStream(player, session, undefined, baseUrl)));
    await Promise.all(streams.map((s) => s.until((e) => e.type === 'committed')));
    expect(registry.open).toEqual({ feeds: 3, tenants: 1, keys: 1 });
    expect(covel.engine.appends.size).toBe(engineOwn + 3);
    for (const s of streams) s.close();
    await eventually(() => registry.open.feeds === 0 && covel.engine.appends.size === engineOwn);
    expect(registry.open).toEqual({ feeds: 0, tenants: 0, keys: 0 });
    expect(covel.engine.appends.size).toBe(engineOwn);
  }, 30_000);

  it('a client that leaves while its stream is being set up (before it opens) leaves nothing behind', async () => {
    const registry = api.get(SessionEvents);
    await eventually(() => registry.open.feeds === 0);
    const engineOwn = covel.engine.appends.size;
    const deltas = covel.engine.deltas;
    const subscribe = deltas.subscribe.bind(deltas);
    let reached!: () => void;
    let release!: () => void;
    const subscribing = new Promise<void>((resolve) => (reached = resolve));
    const released = new Promise<void>((resolve) => (release = resolve));
    // the feed's subscription to the deltas is slow: the stream waits for it before it opens
    const held = jest.spyOn(deltas, 'subscribe').mockImplementationOnce(async (...args) => {
      reached();
      await released;
      return subscribe(...args);
    });
    const stopped = jest.spyOn(SessionFeed.prototype, 'stop');
    try {
      const client = new AbortController();
      const opening = fetch(`${baseUrl}${eventsPath(session)}`, { headers: player.authHeaders(), signal: client.signal }).catch(() => undefined);
      await subscribing;
      expect(registry.open.feeds).toBe(1);
      client.abort();
      await opening;
      await eventually(() => stopped.mock.calls.length > 0); // the API has seen the client leave
      release();
      await eventually(() => registry.open.feeds === 0 && covel.engine.appends.size === engineOwn);
      expect(registry.open).toEqual({ feeds: 0, tenants: 0, keys: 0 });
      expect(covel.engine.appends.size).toBe(engineOwn);
    } finally {
      held.mockRestore();
      stopped.mockRestore();
    }
  }, 30_000);
});

describe('StreamCounts', () => {
  it('refuses past the per-key limit even under the tenant one, and counts a release once', () => {
    const counts = new StreamCounts({ perTenant: 10, perKey: 2 });
    const a = counts.take('t', 'k1');
    const b = counts.take('t', 'k1');
    expect(counts.take('t', 'k1')).toMatchObject({ code: 'TOO_MANY_STREAMS', category: 'too-many-requests' });
    expect(typeof counts.take('t', 'k2')).toBe('function'); // another key of the tenant
    if (typeof a !== 'function' || typeof b !== 'function') throw new Error('taken');
    a();
    a(); // twice: still one place freed
    expect(typeof counts.take('t', 'k1')).toBe('function');
    expect(counts.take('t', 'k1')).toBeInstanceOf(Error);
  });
});
