import { sql } from 'kysely';
import { ConcurrencyError, EventStore, InvalidEventError, migrateToLatest, openDatabase, type OpenDatabase, StreamTenantMismatchError } from '..';

const created = (sessionId: string) => ({
  type: 'session.created@1' as const,
  data: { sessionId, worldId: null, locale: 'en' as const },
});

describe('event log (PGlite)', () => {
  let open: OpenDatabase;
  let store: EventStore;
  beforeAll(async () => {
    open = await openDatabase({ kind: 'pglite' });
    await migrateToLatest(open.db);
    store = new EventStore(open.db);
  });
  afterAll(() => open.close());

  it('appends with the expected version and reads the stream back in order', async () => {
    const r1 = await store.append({ tenantId: 't1', streamId: 's1', expectedVersion: 0, events: [created('s1')] });
    expect(r1.version).toBe(1);
    const r2 = await store.append({
      tenantId: 't1',
      streamId: 's1',
      expectedVersion: 1,
      events: [
        { type: 'player-input.submitted@1', data: { executionId: 'e1', turnId: 'u1', messageId: 'm1', text: 'hello' } },
        { type: 'player-input.submitted@1', data: { executionId: 'e2', turnId: 'u2', messageId: 'm2', text: 'again' } },
      ],
    });
    expect(r2.version).toBe(3);
    const events = await store.readStream('s1');
    expect(events.map((e) => [e.streamVersion, e.type])).toEqual([
      [1, 'session.created@1'],
      [2, 'player-input.submitted@1'],
      [3, 'player-input.submitted@1'],
    ]);
    expect(events[1].globalPosition).toBeLessThan(events[2].globalPosition);
    expect(await store.streamTenant('s1')).toBe('t1');
  });

  it('rejects a stale expected version with a typed error and writes nothing', async () => {
    await expect(store.append({ tenantId: 't1', streamId: 's1', expectedVersion: 1, events: [created('s1')] })).rejects.toBeInstanceOf(ConcurrencyError);
    expect(await store.streamVersion('s1')).toBe(3);
  });

  it('two concurrent appends at the same version: exactly one wins', async () => {
    await store.append({ tenantId: 't1', streamId: 'race', expectedVersion: 0, events: [created('race')] });
    const results = await Promise.allSettled([
      store.append({
        tenantId: 't1',
        streamId: 'race',
        expectedVersion: 1,
        events: [{ type: 'player-input.submitted@1', data: { executionId: 'a', turnId: 'a', messageId: 'a', text: 'a' } }],
      }),
      store.append({
        tenantId: 't1',
        streamId: 'race',
        expectedVersion: 1,
        events: [{ type: 'player-input.submitted@1', data: { executionId: 'b', turnId: 'b', messageId: 'b', text: 'b' } }],
      }),
    ]);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    const rejected = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
    expect(rejected.reason).toBeInstanceOf(ConcurrencyError);
    expect(await store.readStream('race')).toHaveLength(2);
  });

  it('validates payloads against the versioned schema', async () => {
    await expect(
      store.append({
        tenantId: 't1',
        streamId: 'bad',
        expectedVersion: 0,
        events: [{ type: 'session.created@1', data: { sessionId: 'x', worldId: null, locale: 'fr' } as never }],
      }),
    ).rejects.toThrow(InvalidEventError);
    expect(await store.streamVersion('bad')).toBe(0);
  });

  it('refuses another tenant writing into a stream', async () => {
    await expect(store.append({ tenantId: 't2', streamId: 's1', expectedVersion: 3, events: [created('s1')] })).rejects.toBeInstanceOf(
      StreamTenantMismatchError,
    );
  });

  it('UPDATE, DELETE and TRUNCATE on events fail', async () => {
    await expect(sql`update events set type = 'x'`.execute(open.db)).rejects.toThrow(/append-only/);
    await expect(sql`delete from events`.execute(open.db)).rejects.toThrow(/append-only/);
    await expect(sql`truncate events`.execute(open.db)).rejects.toThrow(/append-only/);
    expect(await store.streamVersion('s1')).toBe(3);
  });

  it('migrations are idempotent', async () => {
    expect(await migrateToLatest(open.db)).toEqual([]);
  });
});
