import { createHmac, hash, randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { ApiKeyScope } from './event-types';
import type { Database } from './schema';

/** A new API key: a random 256-bit secret, `cvl_` + 43 base64url characters. */
export function newApiKey(): string {
  return `cvl_${randomBytes(32).toString('base64url')}`;
}

/** How many characters of a key are kept as its hint (`cvl_` and 4 more: 24 bits of 256, not a secret). */
export const KEY_PREFIX_LENGTH = 8;

/**
 * The key's plain SHA-256 (of its UTF-8 bytes, hex): stored only for the keys migrated from before
 * 0024 (`hash_kind` `sha256`); in memory, what a process remembers a found key by (`TenantStore`).
 */
export function sha256ApiKey(apiKey: string): string {
  return hash('sha256', apiKey, 'hex');
}

/** The stored form of a key: HMAC-SHA-256 with the server's pepper (a database alone does not let anyone test guesses). */
export function hmacApiKey(apiKey: string, pepper: Buffer): string {
  return createHmac('sha256', pepper).update(apiKey, 'utf8').digest('hex');
}

/**
 * The pepper keys are hashed with: `COVEL_KEY_PEPPER` when set (kept outside the database: a stolen
 * database then holds nothing to test keys against); otherwise one generated at the first start and
 * kept in the database (`key_pepper`), so that every process of a deployment, and the tools, hash
 * alike with no setting. Changing `COVEL_KEY_PEPPER` later makes every key made before it unknown.
 */
export async function loadKeyPepper(db: Kysely<Database>, configured: string | null | undefined): Promise<Buffer> {
  if (configured) return Buffer.from(configured, 'utf8');
  const read = () => db.selectFrom('key_pepper').select('pepper').where('id', '=', 1).executeTakeFirst();
  let row = await read();
  if (!row) {
    await db
      .insertInto('key_pepper')
      .values({ id: 1, pepper: randomBytes(32).toString('base64url') })
      .onConflict((oc) => oc.column('id').doNothing())
      .execute();
    row = await read();
  }
  return Buffer.from(row!.pepper, 'utf8');
}

/** An API key as its tenant sees it: never the key or its hash. */
export interface ApiKeyView {
  id: string;
  name: string;
  scopes: ApiKeyScope[];
  /** The key's first characters, to tell keys apart (not a secret). */
  prefix: string;
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
}

/** The key a request authenticated with. */
export interface AuthenticatedKey {
  id: string;
  scopes: readonly ApiKeyScope[];
}
