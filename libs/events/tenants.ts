import { randomUUID } from 'node:crypto';
import { type Kysely, sql, type Transaction } from 'kysely';
import { ConflictError, NotFoundError } from '../errors';
import { type ApiKeyView, type AuthenticatedKey, hmacApiKey, KEY_PREFIX_LENGTH, loadKeyPepper, newApiKey, sha256ApiKey } from './api-keys';
import { ConcurrencyError } from './errors';
import { API_KEY_SCOPES, type ApiKeyScope, type NewEvent, tenantStreamId } from './event-types';
import { EventStore } from './event-store';
import type { Database } from './schema';
import { textStatement } from './sql-text';
import { BoundedMemo } from '../memo';
import { type RecordedTenantLimits, recordedTenantLimits } from './tenant-limits';

export interface Tenant {
  id: string;
  name: string;
}

/** A tenant and the key a request presented. */
export interface Caller {
  tenant: Tenant;
  key: AuthenticatedKey;
}

/** Who does an admin action: the operator, or a tenant's key (`key:<id>`). */
export type AdminActor = 'operator' | `key:${string}`;

export interface TenantStoreOptions {
  /**
   * How long a found key is remembered in this process (every API request looks its key up). A
   * revoked key is refused by every process once this has passed: keep it well under a second. 0: no cache.
   */
  cacheMs?: number;
  /** Upper bound of remembered keys (the oldest is forgotten first). */
  cacheSize?: number;
  /** The pepper of the keys' HMAC (`COVEL_KEY_PEPPER`); unset: the one kept in the database (`loadKeyPepper`). */
  pepper?: string | null;
  /** Where the admin actions are recorded (`tenant.created@1`, `api-key.*`); default: a store on the same database. */
  store?: EventStore;
  /** A key's `last_used_at` is written at most once per this many ms per process (default one minute). */
  touchEveryMs?: number;
  /**
   * Set: a key looked up in the database brings its tenant's limits (`tenant_limits`) in the same
   * statement, handed here as read (null: none recorded), so that the request's limits need no read
   * of their own (issue 33: a statement per request that found neither cached).
   */
  onLimitsRead?: (tenantId: string, recorded: RecordedTenantLimits | null) => void;
}

const LAST_USED_EVERY_MS = 60_000;

/** What the key lookup reads: the key and its tenant (and, `KEY_LOOKUP_WITH_LIMITS`, the tenant's `tenant_limits` row, null fields: none). */
type KeyLookupRow = {
  keyId: string;
  scopes: string[];
  hash_kind: 'sha256' | 'hmac-sha256';
  key_hash: string;
  tenantId: string;
  name: string;
  limits?: unknown;
  changed_by?: string | null;
  updated_at?: Date | string | null;
};

/**
 * The key lookup of every request whose key is not in memory (`authenticate`), its text written here
 * rather than built with kysely on each lookup (issue 33: CPU per request): an active key by either
 * hash ($1 the HMAC, $2 the plain SHA-256 of a key from before 0024) and its tenant.
 */
const KEY_LOOKUP_COLUMNS = `api_keys.id as "keyId", api_keys.scopes, api_keys.hash_kind, api_keys.key_hash, tenants.id as "tenantId", tenants.name`;
const KEY_LOOKUP_WHERE = `where api_keys.key_hash in ($1, $2) and api_keys.revoked_at is null`;
const KEY_LOOKUP = `select ${KEY_LOOKUP_COLUMNS} from api_keys inner join tenants on tenants.id = api_keys.tenant_id ${KEY_LOOKUP_WHERE}`;
/** `KEY_LOOKUP` with the tenant's limits in the same statement (see `TenantStoreOptions.onLimitsRead`). */
const KEY_LOOKUP_WITH_LIMITS = `select ${KEY_LOOKUP_COLUMNS}, tenant_limits.limits, tenant_limits.changed_by, tenant_limits.updated_at
  from api_keys inner join tenants on tenants.id = api_keys.tenant_id left join tenant_limits on tenant_limits.tenant_id = tenants.id ${KEY_LOOKUP_WHERE}`;

type KeyRow = { id: string; name: string; scopes: string[]; prefix: string; created_at: Date; last_used_at: Date | null; revoked_at: Date | null };

const iso = (d: Date | string | null): string | null => (d === null ? null : new Date(d).toISOString());
const scopesOf = (scopes: readonly string[]): ApiKeyScope[] => API_KEY_SCOPES.filter((s) => scopes.includes(s));
const viewOf = (row: KeyRow): ApiKeyView => ({
  id: row.id,
  name: row.name,
  scopes: scopesOf(row.scopes),
  prefix: row.prefix,
  createdAt: iso(row.created_at)!,
  lastUsedAt: iso(row.last_used_at),
  revokedAt: iso(row.revoked_at),
});

export class ApiKeyNotFoundError extends NotFoundError {
  constructor() {
    super('API_KEY_NOT_FOUND', 'api key not found');
  }
}

export class TenantNotFoundError extends NotFoundError {
  constructor() {
    super('TENANT_NOT_FOUND', 'tenant not found');
  }
}

/** A tenant's key may not revoke the tenant's last admin key (the operator may). */
export class LastAdminKeyError extends ConflictError {
  constructor() {
    super(
      'LAST_ADMIN_KEY',
      "the tenant's last key with the admin scope cannot revoke itself away: make another admin key first (the operator can revoke any key)",
    );
  }
}

/**
 * A key (or tenant) that is already stored: a unique violation of the tenant store, answered
 * without the database's detail (which names the key's hash).
 */
export class ApiKeyExistsError extends ConflictError {
  constructor() {
    super('API_KEY_EXISTS', 'this api key (or tenant) is already stored');
  }
}

/** A concurrent revoke won: the append is rolled back, the key read again. */
class AlreadyRevoked extends Error {}

/**
 * Tenants and their API keys. Keys are stored as an HMAC (`api_keys`); every admin action (tenant
 * made, key made or revoked) is an event of the stream `tenant:<tenantId>`, appended in the same
 * transaction as the row it changes: nothing is half-written.
 */
export class TenantStore {
  /** By the presented key's plain SHA-256 (never stored): the caller, answered from here for `cacheMs`. */
  private readonly cache: BoundedMemo<string, Caller>;
  /** By key id: whether it was active when read, answered from here for `cacheMs`. */
  private readonly activeCache: BoundedMemo<string, boolean>;
  /** By the presented key's plain SHA-256: its HMAC, for a key found before (its lookups after `cacheMs` hash it once, not twice). */
  private readonly hmacs: BoundedMemo<string, string>;
  /** By key id: when this process last wrote its `last_used_at`. */
  private readonly touched: BoundedMemo<string, number>;
  private readonly cacheSize: number;
  private readonly touchEveryMs: number;
  private readonly store: EventStore;
  private pepper: Promise<Buffer> | null = null;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly options: TenantStoreOptions = {},
  ) {
    this.cacheSize = options.cacheSize ?? 10_000;
    const cached = { ttlMs: options.cacheMs ?? 0, maxEntries: this.cacheSize };
    this.cache = new BoundedMemo(cached);
    this.activeCache = new BoundedMemo(cached);
    this.touched = new BoundedMemo({ maxEntries: this.cacheSize });
    this.hmacs = new BoundedMemo({ maxEntries: this.cacheSize });
    this.touchEveryMs = options.touchEveryMs ?? LAST_USED_EVERY_MS;
    this.store = options.store ?? new EventStore(db);
  }

  private hashWith(): Promise<Buffer> {
    this.pepper ??= loadKeyPepper(this.db, this.options.pepper).catch((error: unknown) => {
      this.pepper = null;
      throw error;
    });
    return this.pepper;
  }

  /**
   * Creates a tenant and its first key, with every scope (the key is returned once; only its HMAC
   * is stored). Recorded as `tenant.created@1` and `api-key.created@1` by `by` (default the operator).
   */
  async create(
    name: string,
    apiKey: string = newApiKey(),
    options: { by?: AdminActor; keyName?: string } = {},
  ): Promise<{ tenant: Tenant; apiKey: string; key: ApiKeyView }> {
    const tenant = { id: randomUUID(), name };
    const by = options.by ?? 'operator';
    const key = await this.keyRow({ tenantId: tenant.id, name: options.keyName ?? 'first key', scopes: [...API_KEY_SCOPES], apiKey });
    await this.append(
      tenant.id,
      [
        { type: 'tenant.created@1', data: { tenantId: tenant.id, name, by } },
        { type: 'api-key.created@1', data: { keyId: key.id, name: key.name, scopes: key.scopes, by } },
      ],
      async (trx) => {
        await trx.insertInto('tenants').values(tenant).execute();
        await trx.insertInto('api_keys').values(key).execute();
      },
    );
    return { tenant, apiKey, key: viewOf({ ...key, created_at: new Date(), last_used_at: null, revoked_at: null }) };
  }

  /** Every tenant, oldest first (the operator's list). */
  async list(): Promise<(Tenant & { createdAt: string })[]> {
    const rows = await this.db.selectFrom('tenants').select(['id', 'name', 'created_at']).orderBy('created_at').orderBy('id').execute();
    return rows.map((r) => ({ id: r.id, name: r.name, createdAt: iso(r.created_at)! }));
  }

  async get(tenantId: string): Promise<Tenant | null> {
    return (await this.db.selectFrom('tenants').select(['id', 'name']).where('id', '=', tenantId).executeTakeFirst()) ?? null;
  }

  /** A new key of the tenant (returned once), recorded as `api-key.created@1`. */
  async createKey(request: { tenantId: string; name: string; scopes: readonly ApiKeyScope[]; by: AdminActor }): Promise<{ apiKey: string; key: ApiKeyView }> {
    if (!(await this.get(request.tenantId))) throw new TenantNotFoundError();
    const apiKey = newApiKey();
    const key = await this.keyRow({ ...request, apiKey });
    await this.append(
      request.tenantId,
      [{ type: 'api-key.created@1', data: { keyId: key.id, name: key.name, scopes: key.scopes, by: request.by } }],
      async (trx) => {
        await trx.insertInto('api_keys').values(key).execute();
      },
    );
    const row = await this.keyQuery(this.db, request.tenantId).where('id', '=', key.id).executeTakeFirstOrThrow();
    return { apiKey, key: viewOf(row) };
  }

  /** The tenant's keys (revoked ones too), oldest first: never a key or its hash. */
  async listKeys(tenantId: string): Promise<ApiKeyView[]> {
    const rows = await this.keyQuery(this.db, tenantId).orderBy('created_at').orderBy('id').execute();
    return rows.map(viewOf);
  }

  /**
   * Revokes the tenant's key (another tenant's key id: `ApiKeyNotFoundError`), recorded as
   * `api-key.revoked@1`; revoking a revoked key changes nothing. With `keepLastAdmin` (a tenant's
   * own key doing it) the tenant's last active admin key cannot be revoked (`LastAdminKeyError`).
   */
  async revokeKey(request: { tenantId: string; keyId: string; by: AdminActor; keepLastAdmin: boolean }): Promise<ApiKeyView> {
    for (;;) {
      const row = await this.keyQuery(this.db, request.tenantId).where('id', '=', request.keyId).executeTakeFirst();
      if (!row) throw new ApiKeyNotFoundError();
      if (row.revoked_at !== null) return viewOf(row);
      const scopes = scopesOf(row.scopes);
      try {
        await this.append(request.tenantId, [{ type: 'api-key.revoked@1', data: { keyId: row.id, name: row.name, scopes, by: request.by } }], async (trx) => {
          if (request.keepLastAdmin && scopes.includes('admin')) {
            const others = await trx
              .selectFrom('api_keys')
              .select((eb) => eb.fn.countAll<string>().as('n'))
              .where('tenant_id', '=', request.tenantId)
              .where('id', '!=', row.id)
              .where('revoked_at', 'is', null)
              .where(sql<boolean>`'admin' = any(scopes)`)
              .executeTakeFirstOrThrow();
            if (Number(others.n) === 0) throw new LastAdminKeyError();
          }
          const updated = await trx
            .updateTable('api_keys')
            .set({ revoked_at: sql<Date>`now()` })
            .where('id', '=', row.id)
            .where('tenant_id', '=', request.tenantId)
            .where('revoked_at', 'is', null)
            .executeTakeFirst();
          if (updated.numUpdatedRows !== 1n) throw new AlreadyRevoked();
        });
      } catch (error) {
        if (error instanceof AlreadyRevoked) continue;
        throw error;
      }
      this.cache.deleteWhere((caller) => caller.key.id === row.id);
      this.activeCache.delete(row.id);
      return viewOf((await this.keyQuery(this.db, request.tenantId).where('id', '=', row.id).executeTakeFirst())!);
    }
  }

  /**
   * The tenant and key a presented key belongs to, or null (unknown or revoked). Only keys found are
   * remembered (`cacheMs`): an unknown key is always looked up. Notes the key's use (`last_used_at`)
   * at most once a minute per process, never waiting for it.
   */
  async authenticate(apiKey: string): Promise<Caller | null> {
    const pepper = await this.hashWith();
    const sha = sha256ApiKey(apiKey);
    const cached = this.rememberedBySha(sha);
    if (cached) return cached;
    const hmac = this.hmacs.get(sha) ?? hmacApiKey(apiKey, pepper);
    const withLimits = this.options.onLimitsRead !== undefined;
    const { rows } = await this.db.executeQuery(textStatement<KeyLookupRow, Database>(this.db, withLimits ? KEY_LOOKUP_WITH_LIMITS : KEY_LOOKUP, [hmac, sha]));
    const row = rows[0];
    // the hash must be of its own kind: an HMAC stored as `sha256` (or the reverse) is no match
    if (!row || row.key_hash !== (row.hash_kind === 'sha256' ? sha : hmac)) return null;
    this.hmacs.set(sha, hmac);
    if (this.options.onLimitsRead) {
      this.options.onLimitsRead(
        row.tenantId,
        recordedTenantLimits({ limits: row.limits ?? null, changed_by: row.changed_by ?? null, updated_at: row.updated_at ?? null }),
      );
    }
    if (row.hash_kind === 'sha256') await this.upgradeToHmac({ keyId: row.keyId, sha, hmac });
    const caller: Caller = { tenant: { id: row.tenantId, name: row.name }, key: { id: row.keyId, scopes: scopesOf(row.scopes) } };
    this.touch(caller.key.id);
    this.cache.set(sha, caller);
    return caller;
  }

  /**
   * The caller of a key found lately (as `authenticate` answers it from memory), at once, without a
   * promise (issue 33: CPU per request); undefined when it is not in memory: ask `authenticate`.
   */
  remembered(apiKey: string): Caller | undefined {
    return this.rememberedBySha(sha256ApiKey(apiKey));
  }

  /**
   * A found key is remembered by its plain SHA-256, kept in this process only: its next requests cost
   * one hash, not an HMAC as well (issue 33: CPU per request). A 256-bit random key's digest gives
   * nothing to test guesses against that the HMAC would not; the stored form stays the HMAC.
   */
  private rememberedBySha(sha: string): Caller | undefined {
    const cached = this.cache.get(sha);
    if (cached) this.touch(cached.key.id);
    return cached;
  }

  /**
   * Whether a presented key is stored, revoked rows too: `active`, `revoked` or `unknown` (a start
   * that makes a configured key tells a rotated-out key from a new one). Never cached.
   */
  async keyStatus(apiKey: string): Promise<'active' | 'revoked' | 'unknown'> {
    const hmac = hmacApiKey(apiKey, await this.hashWith());
    const sha = sha256ApiKey(apiKey);
    const rows = await this.db.selectFrom('api_keys').select(['hash_kind', 'key_hash', 'revoked_at']).where('key_hash', 'in', [hmac, sha]).execute();
    const own = rows.filter((r) => r.key_hash === (r.hash_kind === 'sha256' ? sha : hmac));
    if (own.length === 0) return 'unknown';
    return own.some((r) => r.revoked_at === null) ? 'active' : 'revoked';
  }

  /**
   * Whether the key (by id) is still there and not revoked: what a long-lived request (an event
   * stream) checks now and then. Remembered for `cacheMs`, as `authenticate` is: the streams of one
   * key share one read, and a revocation reaches them within that time (at once in this process).
   */
  async keyActive(keyId: string): Promise<boolean> {
    const cached = this.activeCache.get(keyId);
    if (cached !== undefined) return cached;
    const row = await this.db.selectFrom('api_keys').select('revoked_at').where('id', '=', keyId).executeTakeFirst();
    const active = row !== undefined && row.revoked_at === null;
    this.activeCache.set(keyId, active);
    return active;
  }

  /** The key's tenant, or null (`authenticate` without the key). */
  async findByApiKey(apiKey: string): Promise<Tenant | null> {
    return (await this.authenticate(apiKey))?.tenant ?? null;
  }

  /**
   * A key migrated from before 0024 (a plain SHA-256) becomes an HMAC at its first use: only then is
   * the key itself at hand. Conditional on the old hash: a process that raced here first changed it,
   * and this one changes nothing. A failure leaves the key as it was (it still works): never logged,
   * the database's detail could name the hash.
   */
  private async upgradeToHmac(request: { keyId: string; sha: string; hmac: string }): Promise<void> {
    await this.db
      .updateTable('api_keys')
      .set({ key_hash: request.hmac, hash_kind: 'hmac-sha256' })
      .where('id', '=', request.keyId)
      .where('hash_kind', '=', 'sha256')
      .where('key_hash', '=', request.sha)
      .execute()
      .catch(() => undefined);
  }

  private touch(keyId: string): void {
    const now = Date.now();
    if (now - (this.touched.get(keyId) ?? 0) < this.touchEveryMs) return;
    this.touched.set(keyId, now);
    // another process may have written it this minute: the condition keeps it to about once a minute in all
    void this.db
      .updateTable('api_keys')
      .set({ last_used_at: sql<Date>`now()` })
      .where('id', '=', keyId)
      .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<', sql<Date>`now() - interval '1 minute'`)]))
      .execute()
      .catch(() => this.touched.delete(keyId));
  }

  private async keyRow(request: { tenantId: string; name: string; scopes: readonly ApiKeyScope[]; apiKey: string }) {
    return {
      id: randomUUID(),
      tenant_id: request.tenantId,
      name: request.name,
      scopes: scopesOf(request.scopes),
      hash_kind: 'hmac-sha256' as const,
      key_hash: hmacApiKey(request.apiKey, await this.hashWith()),
      prefix: request.apiKey.slice(0, KEY_PREFIX_LENGTH),
    };
  }

  private keyQuery(executor: Kysely<Database> | Transaction<Database>, tenantId: string) {
    return executor
      .selectFrom('api_keys')
      .select(['id', 'name', 'scopes', 'prefix', 'created_at', 'last_used_at', 'revoked_at'])
      .where('tenant_id', '=', tenantId);
  }

  /** Appends to the tenant's stream at its head (re-read when another admin action came first). */
  private async append(tenantId: string, events: NewEvent[], alongside: (trx: Transaction<Database>) => Promise<void>): Promise<void> {
    const streamId = tenantStreamId(tenantId);
    for (let attempt = 1; ; attempt++) {
      const expectedVersion = await this.store.streamVersion(streamId);
      try {
        await this.store.append({ tenantId, streamId, expectedVersion, events, alongside });
        return;
      } catch (error) {
        // the database's detail of a unique violation names the key's hash: never passed on (nor as the cause)
        if (isUniqueViolation(error)) throw new ApiKeyExistsError();
        if (!(error instanceof ConcurrencyError) || attempt >= 5) throw error;
      }
    }
  }
}

function isUniqueViolation(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === '23505';
}
