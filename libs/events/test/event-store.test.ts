import { sql } from 'kysely';
import {
  ConcurrencyError,
  EventStore,
  IdempotencyKeyTakenError,
  InvalidEventError,
  migrateToLatest,
  openDatabase,
  type OpenDatabase,
  StreamTenantMismatchError,
} from '..';

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
        events: [{ type: 'session.created@1', data: { sessionId: 'x', worldId: null, locale: 'en_US!!' } }],
      }),
    ).rejects.toThrow(InvalidEventError);
    expect(await store.streamVersion('bad')).toBe(0);
  });

  it('session.created@1 keeps any well-formed language tag, and the early en / zh-Hans', async () => {
    for (const [i, locale] of ['en', 'zh-Hans', 'pt-BR', 'zh-Hant-TW', 'ar'].entries()) {
      const streamId = `locale-${i}`;
      await store.append({
        tenantId: 't1',
        streamId,
        expectedVersion: 0,
        events: [{ type: 'session.created@1', data: { sessionId: streamId, worldId: null, locale } }],
      });
      expect((await store.readStream(streamId))[0].data).toMatchObject({ locale });
    }
  });

  it('refuses another tenant writing into a stream', async () => {
    await expect(store.append({ tenantId: 't2', streamId: 's1', expectedVersion: 3, events: [created('s1')] })).rejects.toBeInstanceOf(
      StreamTenantMismatchError,
    );
  });

  it('appends at the head of the tenant’s existing stream, whatever its version; never starts a stream or writes into another tenant’s', async () => {
    await store.append({ tenantId: 't1', streamId: 'head', expectedVersion: 0, events: [created('head')] });
    const input = (n: number) => ({
      type: 'player-input.submitted@1' as const,
      data: { executionId: `he${n}`, turnId: `hu${n}`, messageId: `hm${n}`, text: `${n}` },
    });
    const first = await store.appendAtHead({ tenantId: 't1', streamId: 'head', events: [input(1)] });
    expect([first.version, first.events[0].streamVersion]).toEqual([2, 2]);
    // concurrent ones all land, one after the other
    const all = await Promise.all([2, 3, 4].map((n) => store.appendAtHead({ tenantId: 't1', streamId: 'head', events: [input(n), input(n + 10)] })));
    expect(all.map((r) => r.version).sort((a, b) => a - b)).toEqual([4, 6, 8]);
    expect((await store.readStream('head')).map((e) => e.streamVersion)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    await expect(store.appendAtHead({ tenantId: 't2', streamId: 'head', events: [input(5)] })).rejects.toBeInstanceOf(StreamTenantMismatchError);
    await expect(store.appendAtHead({ tenantId: 't1', streamId: 'no-such-stream', events: [input(6)] })).rejects.toBeInstanceOf(StreamTenantMismatchError);
    expect(await store.streamVersion('head')).toBe(8);
    expect(await store.streamVersion('no-such-stream')).toBe(0);
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

  describe('idempotency keys', () => {
    const input = (executionId: string) => ({
      type: 'player-input.submitted@1' as const,
      data: { executionId, turnId: executionId, messageId: executionId, text: executionId },
    });
    beforeAll(async () => {
      await store.append({ tenantId: 't1', streamId: 'idem', expectedVersion: 0, events: [created('idem')] });
      await store.append({ tenantId: 't2', streamId: 'idem-t2', expectedVersion: 0, events: [created('idem-t2')] });
    });

    it('records the key in the first event of the append and finds it again, per tenant', async () => {
      await store.append({ tenantId: 't1', streamId: 'idem', expectedVersion: 1, events: [input('k1')], idempotency: { key: 'key-1', requestHash: 'h1' } });
      const found = await store.findByIdempotencyKey('t1', 'key-1');
      expect(found?.requestHash).toBe('h1');
      expect(found?.event).toMatchObject({ streamId: 'idem', streamVersion: 2, data: { executionId: 'k1' }, metadata: { idempotencyKey: 'key-1' } });
      expect(await store.findByIdempotencyKey('t2', 'key-1')).toBeNull();
      expect(await store.findByIdempotencyKey('t1', 'key-2')).toBeNull();
    });

    it('a second append with the key is IdempotencyKeyTakenError (not a stream conflict) and appends nothing', async () => {
      const error = await store
        .append({ tenantId: 't1', streamId: 'idem', expectedVersion: 2, events: [input('k1-again')], idempotency: { key: 'key-1', requestHash: 'h1' } })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(IdempotencyKeyTakenError);
      expect(await store.streamVersion('idem')).toBe(2);
      // on a new stream too: the key is the tenant's, not the stream's
      const other = await store
        .append({ tenantId: 't1', streamId: 'idem-new', expectedVersion: 0, events: [created('idem-new')], idempotency: { key: 'key-1', requestHash: 'h2' } })
        .catch((e: unknown) => e);
      expect(other).toBeInstanceOf(IdempotencyKeyTakenError);
      expect(await store.streamVersion('idem-new')).toBe(0);
    });

    it("another tenant's same key is independent", async () => {
      await store.append({
        tenantId: 't2',
        streamId: 'idem-t2',
        expectedVersion: 1,
        events: [input('t2-k1')],
        idempotency: { key: 'key-1', requestHash: 'other' },
      });
      expect((await store.findByIdempotencyKey('t2', 'key-1'))?.event.data).toMatchObject({ executionId: 't2-k1' });
      expect((await store.findByIdempotencyKey('t1', 'key-1'))?.event.data).toMatchObject({ executionId: 'k1' });
    });

    it('a stale expected version is still a ConcurrencyError when a key is given', async () => {
      await expect(
        store.append({ tenantId: 't1', streamId: 'idem', expectedVersion: 1, events: [input('k3')], idempotency: { key: 'key-3', requestHash: 'h3' } }),
      ).rejects.toBeInstanceOf(ConcurrencyError);
      expect(await store.findByIdempotencyKey('t1', 'key-3')).toBeNull();
    });
  });
});
