import { Kysely, Migrator, sql } from 'kysely';
import { migrations } from '../../migrations';
import { type Database, hmacApiKey, loadKeyPepper, newApiKey, sha256ApiKey, TenantStore } from '../../libs/events';
import { PGliteDialect } from '../../libs/events/pglite-dialect';
import { emptyPGlite } from '../support/empty-pglite';

/**
 * Migration 0024 moves each tenant's one key (a plain SHA-256 in `tenants.api_key_hash`) to
 * `api_keys` as a key with every scope and hash kind `sha256`: it keeps working, becomes an HMAC at
 * its first use (only then is the key at hand), can be revoked like any other, and new keys are HMACs.
 */
describe('migration 0024_api_keys', () => {
  it("keeps a tenant's key from before working, with every scope; it can be revoked", async () => {
    const pglite = emptyPGlite();
    const db = new Kysely<unknown>({ dialect: new PGliteDialect(pglite) });
    try {
      const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations } });
      expect((await migrator.migrateTo('0023_session_appended_notify')).error).toBeUndefined();
      const oldKey = newApiKey();
      await sql`insert into tenants (id, name, api_key_hash) values ('t-old', 'old', ${sha256ApiKey(oldKey)})`.execute(db);
      expect((await migrator.migrateToLatest()).error).toBeUndefined();

      const keyRows = async () =>
        (
          await sql<{ hash_kind: string; key_hash: string; name: string; api_key_hash: string | null }>`
            select k.hash_kind, k.key_hash, k.name, t.api_key_hash from api_keys k join tenants t on t.id = k.tenant_id`.execute(db)
        ).rows;
      expect(await keyRows()).toEqual([{ hash_kind: 'sha256', key_hash: sha256ApiKey(oldKey), name: 'key of old', api_key_hash: null }]);

      // two processes meet the old key at once: both let it in, its row becomes the HMAC (once)
      const store = new TenantStore(db as unknown as Kysely<Database>);
      const [caller, other] = await Promise.all([store.authenticate(oldKey), new TenantStore(db as unknown as Kysely<Database>).authenticate(oldKey)]);
      expect(caller).toEqual({ tenant: { id: 't-old', name: 'old' }, key: { id: expect.any(String), scopes: ['play', 'read', 'admin'] } });
      expect(other).toEqual(caller);
      const hmac = hmacApiKey(oldKey, await loadKeyPepper(db as unknown as Kysely<Database>, null));
      expect(await keyRows()).toEqual([{ hash_kind: 'hmac-sha256', key_hash: hmac, name: 'key of old', api_key_hash: null }]);
      // and is still found by its HMAC (no cache here)
      expect(await store.authenticate(oldKey)).toEqual(caller);

      // a new key of the tenant is an HMAC; the old key (the only admin one) can then be revoked by it
      const made = await store.createKey({ tenantId: 't-old', name: 'new admin', scopes: ['admin', 'read'], by: `key:${caller!.key.id}` });
      const kinds = await sql<{ hash_kind: string }>`select hash_kind from api_keys where id = ${made.key.id}`.execute(db);
      expect(kinds.rows).toEqual([{ hash_kind: 'hmac-sha256' }]);
      await store.revokeKey({ tenantId: 't-old', keyId: caller!.key.id, by: `key:${made.key.id}`, keepLastAdmin: true });
      expect(await store.authenticate(oldKey)).toBeNull();
      expect((await store.authenticate(made.apiKey))?.key.scopes).toEqual(['read', 'admin']);
    } finally {
      await db.destroy();
    }
  }, 60_000);
});
