import type { Kysely } from 'kysely';
import type { Database } from '../schema';
import { checkedPut, type MediaRef, type MediaStore, type NewMedia, type StoredMedia, storedMeta, wellFormedRef } from './port';

/** The MediaStore of deployments: the `media` table (bytea), PostgreSQL or PGlite (migration 0013). */
export class TableMediaStore implements MediaStore {
  constructor(private readonly db: Kysely<Database>) {}

  async put(item: NewMedia): Promise<string> {
    const mediaId = checkedPut(item);
    await this.db
      .insertInto('media')
      .values({
        tenant_id: item.tenantId,
        session_id: item.sessionId,
        media_id: mediaId,
        mime_type: item.mimeType,
        meta: JSON.stringify(storedMeta(item.meta)),
        bytes: Buffer.from(item.bytes.buffer, item.bytes.byteOffset, item.bytes.byteLength),
      })
      .onConflict((oc) => oc.columns(['tenant_id', 'session_id', 'media_id']).doNothing())
      .execute();
    return mediaId;
  }

  async get(ref: MediaRef): Promise<StoredMedia | null> {
    if (!wellFormedRef(ref)) return null;
    const row = await this.db
      .selectFrom('media')
      .select(['mime_type', 'meta', 'bytes'])
      .where('tenant_id', '=', ref.tenantId)
      .where('session_id', '=', ref.sessionId)
      .where('media_id', '=', ref.mediaId)
      .executeTakeFirst();
    if (!row) return null;
    const bytes = Buffer.isBuffer(row.bytes) ? row.bytes : Buffer.from(row.bytes.buffer, row.bytes.byteOffset, row.bytes.byteLength);
    return { mimeType: row.mime_type, bytes, meta: storedMeta(JSON.parse(row.meta) as StoredMedia['meta']) };
  }
}
