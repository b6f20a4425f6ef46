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

export class TenantStore {
  constructor(private readonly db: Kysely<Database>) {}

  /** Creates a tenant and returns its key; the key itself is never stored. */
  async create(name: string, apiKey: string = newApiKey()): Promise<{ tenant: Tenant; apiKey: string }> {
    const tenant = { id: randomUUID(), name };
    await this.db
      .insertInto('tenants')
      .values({ ...tenant, api_key_hash: hashApiKey(apiKey) })
      .execute();
    return { tenant, apiKey };
  }

  async findByApiKey(apiKey: string): Promise<Tenant | null> {
    const row = await this.db.selectFrom('tenants').select(['id', 'name']).where('api_key_hash', '=', hashApiKey(apiKey)).executeTakeFirst();
    return row ?? null;
  }
}
