import { randomUUID } from 'node:crypto';
import { EngineError } from '../../errors';

/**
 * Where generated media live (`ctx.assets.generate`, spec §1 "Images that have been shown"): the
 * bytes, out of the event log, which records only their reference. One port, two drivers — files
 * under the embedded data directory (`FileMediaStore`) and a PostgreSQL table (`TableMediaStore`) —
 * with one conformance suite. Every item belongs to one tenant and one session: a read names both,
 * and another tenant's or session's item is not found.
 */
export interface MediaStore {
  /** Stores the bytes (a put of an id already stored keeps the first); resolves to the media id. */
  put(item: NewMedia): Promise<string>;
  /** The item, or null when this tenant's session has none by that id (or the id is malformed). */
  get(ref: MediaRef): Promise<StoredMedia | null>;
}

export interface MediaRef {
  tenantId: string;
  sessionId: string;
  mediaId: string;
}

/** What a plugin said the media shows (`meta` of `ctx.assets.generate`). */
export interface MediaMeta {
  caption?: string;
  prompt?: string;
}

export interface NewMedia {
  tenantId: string;
  sessionId: string;
  /** Chosen by the caller (the engine assigns it when the plugin submits); default: a new UUID. */
  mediaId?: string;
  mimeType: string;
  bytes: Uint8Array;
  meta: MediaMeta;
}

export interface StoredMedia {
  mimeType: string;
  bytes: Buffer;
  meta: MediaMeta;
}

/** A media id is a UUID (lowercase, as `randomUUID` writes it). */
export const MEDIA_ID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
/** Tenant and session ids as the store accepts them (they name folders of the file driver). */
const SCOPE_ID = /^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/;
/** A MIME type: `type/subtype`. */
export const MIME_TYPE_PATTERN = /^[a-z]+\/[a-z0-9][a-z0-9.+-]{0,126}$/;

export class InvalidMediaError extends EngineError {
  readonly code = 'INVALID_MEDIA';
  readonly category = 'invalid';
}

/** The media id to store under, or an error naming what is malformed. */
export function checkedPut(item: NewMedia): string {
  const mediaId = item.mediaId ?? randomUUID();
  if (!SCOPE_ID.test(item.tenantId)) throw new InvalidMediaError(`media: malformed tenant id ${JSON.stringify(item.tenantId)}`);
  if (!SCOPE_ID.test(item.sessionId)) throw new InvalidMediaError(`media: malformed session id ${JSON.stringify(item.sessionId)}`);
  if (!MEDIA_ID_PATTERN.test(mediaId)) throw new InvalidMediaError(`media: malformed media id ${JSON.stringify(mediaId)}`);
  if (!MIME_TYPE_PATTERN.test(item.mimeType)) throw new InvalidMediaError(`media: malformed MIME type ${JSON.stringify(item.mimeType)}`);
  return mediaId;
}

/** Whether a read can name an item at all (a malformed reference is simply not found). */
export function wellFormedRef(ref: MediaRef): boolean {
  return SCOPE_ID.test(ref.tenantId) && SCOPE_ID.test(ref.sessionId) && MEDIA_ID_PATTERN.test(ref.mediaId);
}

/** The meta as stored: only the two known fields, strings. */
export function storedMeta(meta: MediaMeta): MediaMeta {
  return {
    ...(typeof meta.caption === 'string' ? { caption: meta.caption } : {}),
    ...(typeof meta.prompt === 'string' ? { prompt: meta.prompt } : {}),
  };
}
