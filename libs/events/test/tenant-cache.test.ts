import { migrateToLatest, openDatabase, type OpenDatabase, TenantStore } from '..';

describe('TenantStore key cache (PGlite)', () => {
  let open: OpenDatabase;
  beforeAll(async () => {
    open = await openDatabase({ kind: 'pglite' });
    await migrateToLatest(open.db);
  });
  afterAll(() => open.close());

  it('answers a found key from memory for cacheMs, then asks the database again', async () => {
    const store = new TenantStore(open.db, { cacheMs: 60_000 });
    const { tenant, apiKey } = await store.create('cached');
    expect(await store.findByApiKey(apiKey)).toEqual(tenant);
    await open.db.updateTable('tenants').set({ name: 'renamed' }).where('id', '=', tenant.id).execute();
    expect(await store.findByApiKey(apiKey)).toEqual(tenant); // remembered
    expect(await new TenantStore(open.db).findByApiKey(apiKey)).toEqual({ ...tenant, name: 'renamed' }); // no cache: read
  });

  it('never remembers an unknown key, and forgets the oldest key beyond cacheSize', async () => {
    const store = new TenantStore(open.db, { cacheMs: 60_000, cacheSize: 1 });
    const a = await store.create('a');
    const b = await store.create('b');
    expect(await store.findByApiKey('cvl_unknown')).toBeNull();
    await open.db
      .insertInto('tenants')
      .values({ id: 'late', name: 'late', api_key_hash: (await import('..')).hashApiKey('cvl_unknown') })
      .execute();
    expect(await store.findByApiKey('cvl_unknown')).toEqual({ id: 'late', name: 'late' });
    await store.findByApiKey(a.apiKey);
    await store.findByApiKey(b.apiKey); // evicts a
    await open.db.updateTable('tenants').set({ name: 'a2' }).where('id', '=', a.tenant.id).execute();
    expect((await store.findByApiKey(a.apiKey))?.name).toBe('a2');
  });
});
