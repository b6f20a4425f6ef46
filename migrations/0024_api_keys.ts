import { type Kysely, sql } from 'kysely';

/**
 * Several API keys per tenant, each with scopes (issue 32): `api_keys` holds a keyed hash of each
 * key (`hash_kind` `hmac-sha256`: HMAC-SHA-256 with the server's pepper), never the key. A tenant's
 * key from before (`tenants.api_key_hash`, a plain SHA-256) moves here as a key with every scope and
 * `hash_kind` `sha256`: it cannot become an HMAC without the key itself, so it is verified by its
 * plain hash until it is revoked (keys made from now on are all HMACs). `tenants.api_key_hash` is
 * no longer written or read (nullable, emptied).
 *
 * `key_pepper`: the pepper generated once when `COVEL_KEY_PEPPER` is not set (one row), so every
 * process of a deployment hashes alike (see libs/events/keys/pepper.ts).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table api_keys (
      id text primary key,
      tenant_id text not null references tenants(id),
      name text not null,
      scopes text[] not null,
      hash_kind text not null check (hash_kind in ('hmac-sha256', 'sha256')),
      key_hash text not null unique,
      prefix text not null,
      created_at timestamptz not null default now(),
      last_used_at timestamptz,
      revoked_at timestamptz
    )`.execute(db);
  await sql`create index api_keys_tenant on api_keys (tenant_id, created_at)`.execute(db);
  await sql`
    insert into api_keys (id, tenant_id, name, scopes, hash_kind, key_hash, prefix, created_at)
    select gen_random_uuid()::text, id, 'key of ' || name, array['play', 'read', 'admin'], 'sha256', api_key_hash, 'cvl_', created_at
    from tenants where api_key_hash is not null`.execute(db);
  await sql`alter table tenants alter column api_key_hash drop not null`.execute(db);
  await sql`update tenants set api_key_hash = null`.execute(db);
  await sql`create table key_pepper (id int primary key check (id = 1), pepper text not null)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  // only the keys that were plain SHA-256 hashes can go back (one per tenant: the oldest)
  await sql`
    update tenants t set api_key_hash = k.key_hash
    from (select distinct on (tenant_id) tenant_id, key_hash from api_keys where hash_kind = 'sha256' and revoked_at is null order by tenant_id, created_at) k
    where k.tenant_id = t.id`.execute(db);
  await sql`drop table key_pepper`.execute(db);
  await sql`drop table api_keys`.execute(db);
}
