import { join } from 'node:path';
import type { OpenDatabase } from '../database';
import { FileMediaStore } from './file-store';
import type { MediaStore } from './port';
import { TableMediaStore } from './table-store';

export { FileMediaStore } from './file-store';
export { TableMediaStore } from './table-store';
export { InvalidMediaError, MEDIA_ID_PATTERN, MIME_TYPE_PATTERN } from './port';
export type { MediaStore, MediaRef, MediaMeta, NewMedia, StoredMedia } from './port';

/**
 * The deployment's MediaStore: PostgreSQL (and an in-memory PGlite) keep media in the `media`
 * table; the embedded default on disk keeps them as files beside its database, under `dataDir/media`.
 */
export function mediaStoreFor(database: OpenDatabase, options: { filesDir?: string }): MediaStore {
  return database.kind === 'pglite' && options.filesDir ? new FileMediaStore(join(options.filesDir, 'media')) : new TableMediaStore(database.db);
}
export { InheritedMedia } from './inherited-media';
