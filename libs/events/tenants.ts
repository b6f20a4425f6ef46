import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from './schema';

export interface Tenant {
  id: string;
  name: string;
}

/** API keys are random 256-bit secrets, so a plain SHA-256 is a sufficient stored form. */
export function hashApiKey(apiKey: string): string {
  return createHash('sha256').update(apiKey, 'utf8').digest('hex');
}

export function newApiKey(): string {
  return `cvl_${randomBytes(32).toString('base64url')}`;
}

export interface TenantStoreOptions {
  /**
   * How long a found key is remembered in this process (every API request looks its key up).
   * Tenants and keys are never changed or removed today; keep it short anyway. 0: no cache.
   */
  cacheMs?: number;
  /** Upper bound of remembered keys (the oldest is forgotten first). */
  cacheSize?: number;
}

export class TenantStore {
  /** By key hash: the tenant and until when (ms since epoch) it may be answered from here. */
  private readonly cache = new Map<string, { tenant: Tenant; until: number }>();
  private readonly cacheMs: number;
  private readonly cacheSize: number;

  constructor(
    private readonly db: Kysely<Database>,
    options: TenantStoreOptions = {},
  ) {
    this.cacheMs = options.cacheMs ?? 0;
    this.cacheSize = options.cacheSize ?? 10_000;
  }

  /** Creates a tenant and returns its key; the key itself is never stored. */
  async create(name: string, apiKey: string = newApiKey()): Promise<{ tenant: Tenant; apiKey: string }> {
    const tenant = { id: randomUUID(), name };
    await this.db
      .insertInto('tenants')
      .values({ ...tenant, api_key_hash: hashApiKey(apiKey) })
      .execute();
    return { tenant, apiKey };
  }

  /** The key's tenant, or null. Only keys found are remembered (`cacheMs`): an unknown key is always looked up. */
  async findByApiKey(apiKey: string): Promise<Tenant | null> {
    const hash = hashApiKey(apiKey);
    const cached = this.cache.get(hash);
    if (cached && cached.until > Date.now()) return cached.tenant;
    this.cache.delete(hash);
    const row = await this.db.selectFrom('tenants').select(['id', 'name']).where('api_key_hash', '=', hash).executeTakeFirst();
    if (!row || this.cacheMs <= 0) return row ?? null;
    if (this.cache.size >= this.cacheSize) this.cache.delete(this.cache.keys().next().value!);
    this.cache.set(hash, { tenant: row, until: Date.now() + this.cacheMs });
    return row;
  }
}
