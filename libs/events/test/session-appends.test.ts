import { createServer, type Server } from 'node:net';
import { EventStore, migrateToLatest, openDatabase, type OpenDatabase, SessionAppends } from '..';

const waitFor = async (check: () => boolean, limitMs = 10_000) => {
  const until = Date.now() + limitMs;
  while (!check() && Date.now() < until) await new Promise((r) => setTimeout(r, 10));
};

const created = (streamId: string, expectedVersion = 0) => ({
  tenantId: 't',
  streamId,
  expectedVersion,
  events: [{ type: 'session.created@1' as const, data: { sessionId: streamId, worldId: null, locale: 'en' as const } }],
});

describe('SessionAppends', () => {
  let database: OpenDatabase;
  let store: EventStore;

  beforeAll(async () => {
    database = await openDatabase({ kind: 'pglite' });
    await migrateToLatest(database.db);
    store = new EventStore(database.db);
  });

  afterAll(() => database.close());

  it("wakes the subscribers of the stream appended to (PGlite's notification at commit), no other stream's, none once unsubscribed", async () => {
    const appends = new SessionAppends({ listen: (c, n, o) => database.listen(c, n, o) });
    const woken: string[] = [];
    const endA = await appends.subscribe('stream-a', () => woken.push('a'));
    const endB = await appends.subscribe('stream-b', () => woken.push('b'));
    expect(appends.listenState).toBe('listening');
    expect(appends.size).toBe(2);
    await store.append(created('stream-a'));
    await waitFor(() => woken.length > 0);
    expect(woken).toEqual(['a']);
    endA();
    endB();
    expect(appends.size).toBe(0);
    await store.append(created('stream-a', 1));
    await new Promise((r) => setTimeout(r, 100));
    expect(woken).toEqual(['a']);
    await appends.close();
  });

  it('while LISTEN cannot be made, wakes every subscriber at the fallback interval; nothing once the last one is gone', async () => {
    // a port that accepts and never answers the PostgreSQL handshake: the LISTEN connection fails in bounded time
    const silent: Server = createServer(() => undefined);
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    const port = (silent.address() as { port: number }).port;
    const unreachable = await openDatabase({ kind: 'postgres', url: `postgres://nobody@127.0.0.1:${port}/none`, connectTimeoutMs: 200 });
    const appends = new SessionAppends({ listen: (c, n, o) => unreachable.listen(c, n, o), fallbackIntervalMs: 50, reconnectDelayMs: 60_000 });
    try {
      let wakes = 0;
      const end = await appends.subscribe('stream-a', () => wakes++);
      expect(appends.listenState).toBe('down');
      await waitFor(() => wakes >= 3);
      expect(wakes).toBeGreaterThanOrEqual(3);
      end();
      const after = wakes;
      await new Promise((r) => setTimeout(r, 200));
      expect(wakes).toBe(after);
    } finally {
      await appends.close();
      await unreachable.close();
      silent.close();
    }
  });
});
