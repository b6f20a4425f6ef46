import { migrateToLatest, openDatabase, type OpenDatabase, sha256ApiKey, TenantStore } from '..';

describe('TenantStore keys and their cache (PGlite)', () => {
  let open: OpenDatabase;
  beforeAll(async () => {
    open = await openDatabase({ kind: 'pglite' });
    await migrateToLatest(open.db);
  });
  afterAll(() => open.close());

  it('answers a found key from memory for cacheMs, then asks the database again', async () => {
    const store = new TenantStore(open.db, { cacheMs: 60_000 });
    const { tenant, apiKey, key } = await store.create('cached');
    expect(await store.findByApiKey(apiKey)).toEqual(tenant);
    await open.db.updateTable('tenants').set({ name: 'renamed' }).where('id', '=', tenant.id).execute();
    expect(await store.findByApiKey(apiKey)).toEqual(tenant); // remembered
    expect(await new TenantStore(open.db).authenticate(apiKey)).toEqual({
      tenant: { ...tenant, name: 'renamed' },
      key: { id: key.id, scopes: ['play', 'read', 'admin'] },
    }); // no cache: read
  });

  it('remembers each presented key as its own: two tenants keys answered from memory each give their own tenant and key, a near miss is unknown', async () => {
    const store = new TenantStore(open.db, { cacheMs: 60_000 });
    const a = await store.create('first tenant');
    const b = await store.create('second tenant');
    const readOnly = await store.createKey({ tenantId: b.tenant.id, name: 'reader', scopes: ['read'], by: 'operator' });
    for (let round = 0; round < 2; round++) {
      // the second round is answered from memory
      expect(await store.authenticate(a.apiKey)).toEqual({ tenant: a.tenant, key: { id: a.key.id, scopes: ['play', 'read', 'admin'] } });
      expect(await store.authenticate(b.apiKey)).toEqual({ tenant: b.tenant, key: { id: b.key.id, scopes: ['play', 'read', 'admin'] } });
      expect(await store.authenticate(readOnly.apiKey)).toEqual({ tenant: b.tenant, key: { id: readOnly.key.id, scopes: ['read'] } });
    }
    const last = a.apiKey.at(-1) === 'A' ? 'B' : 'A';
    expect(await store.authenticate(`${a.apiKey.slice(0, -1)}${last}`)).toBeNull();
    expect(await store.authenticate(a.apiKey.toUpperCase())).toBeNull();
  });

  it('never remembers an unknown key, and forgets the oldest key beyond cacheSize', async () => {
    const store = new TenantStore(open.db, { cacheMs: 60_000, cacheSize: 1 });
    const a = await store.create('a');
    const b = await store.create('b');
    expect(await store.findByApiKey('cvl_unknown')).toBeNull();
    // a key from before migration 0024 (a plain SHA-256, kind `sha256`) is still verified
    await open.db.insertInto('tenants').values({ id: 'late', name: 'late' }).execute();
    await open.db
      .insertInto('api_keys')
      .values({
        id: crypto.randomUUID(),
        tenant_id: 'late',
        name: 'old',
        scopes: ['read'],
        hash_kind: 'sha256',
        key_hash: sha256ApiKey('cvl_unknown'),
        prefix: 'cvl_',
      })
      .execute();
    expect(await store.findByApiKey('cvl_unknown')).toEqual({ id: 'late', name: 'late' });
    await store.findByApiKey(a.apiKey);
    await store.findByApiKey(b.apiKey); // evicts a
    await open.db.updateTable('tenants').set({ name: 'a2' }).where('id', '=', a.tenant.id).execute();
    expect((await store.findByApiKey(a.apiKey))?.name).toBe('a2');
  });

  it('stores an HMAC with the pepper: another pepper does not know the key, and a plain SHA-256 of it is no match', async () => {
    const peppered = new TenantStore(open.db, { pepper: 'p'.repeat(40) });
    const { apiKey, key } = await peppered.create('peppered');
    expect(await peppered.findByApiKey(apiKey)).not.toBeNull();
    expect(await new TenantStore(open.db).findByApiKey(apiKey)).toBeNull(); // the database's pepper
    const row = await open.db.selectFrom('api_keys').selectAll().where('id', '=', key.id).executeTakeFirstOrThrow();
    expect(row.hash_kind).toBe('hmac-sha256');
    expect(row.key_hash).not.toBe(sha256ApiKey(apiKey));
    // the same hash, claimed to be a plain SHA-256 of the key: refused
    await open.db.updateTable('api_keys').set({ hash_kind: 'sha256' }).where('id', '=', key.id).execute();
    expect(await peppered.findByApiKey(apiKey)).toBeNull();
  });

  it('a revoked key is refused at once by the process that revoked it, and after cacheMs by another', async () => {
    const here = new TenantStore(open.db, { cacheMs: 60_000 });
    const there = new TenantStore(open.db, { cacheMs: 300 });
    const { tenant, apiKey, key } = await here.create('revoking');
    const second = await here.createKey({ tenantId: tenant.id, name: 'second admin', scopes: ['admin'], by: 'operator' });
    expect(await here.findByApiKey(apiKey)).not.toBeNull();
    expect(await there.findByApiKey(apiKey)).not.toBeNull();
    await here.revokeKey({ tenantId: tenant.id, keyId: key.id, by: `key:${second.key.id}`, keepLastAdmin: true });
    expect(await here.findByApiKey(apiKey)).toBeNull();
    await new Promise((resolve) => setTimeout(resolve, 350));
    expect(await there.findByApiKey(apiKey)).toBeNull();
    await expect(here.revokeKey({ tenantId: tenant.id, keyId: second.key.id, by: `key:${second.key.id}`, keepLastAdmin: true })).rejects.toMatchObject({
      code: 'LAST_ADMIN_KEY',
    });
    const events = await open.db
      .selectFrom('events')
      .select(['type', 'data'])
      .where('stream_id', '=', `tenant:${tenant.id}`)
      .orderBy('stream_version')
      .execute();
    expect(events.map((e) => e.type)).toEqual(['tenant.created@1', 'api-key.created@1', 'api-key.created@1', 'api-key.revoked@1']);
  });

  it('writes last_used_at once per touchEveryMs, not per request', async () => {
    const store = new TenantStore(open.db, { touchEveryMs: 60_000 });
    const { apiKey, key } = await store.create('touched');
    await store.authenticate(apiKey);
    await new Promise((resolve) => setTimeout(resolve, 100));
    const first = await open.db.selectFrom('api_keys').select('last_used_at').where('id', '=', key.id).executeTakeFirstOrThrow();
    expect(first.last_used_at).not.toBeNull();
    await open.db.updateTable('api_keys').set({ last_used_at: null }).where('id', '=', key.id).execute();
    for (let i = 0; i < 5; i++) await store.authenticate(apiKey);
    await new Promise((resolve) => setTimeout(resolve, 100));
    const after = await open.db.selectFrom('api_keys').select('last_used_at').where('id', '=', key.id).executeTakeFirstOrThrow();
    expect(after.last_used_at).toBeNull(); // not written again within the minute
  });
});
