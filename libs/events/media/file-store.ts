import { randomBytes } from 'node:crypto';
import { mkdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { checkedPut, type MediaRef, type MediaStore, type NewMedia, type StoredMedia, storedMeta, wellFormedRef } from './port';

/**
 * The MediaStore of the embedded default: files under its data directory,
 * `<root>/<tenant>/<session>/<mediaId>` (the bytes) beside `<mediaId>.json` (type and meta). Each
 * file is written to a temporary name and renamed, the bytes last: an item is there whole or not at
 * all. Ids are checked before they name a path.
 */
export class FileMediaStore implements MediaStore {
  constructor(private readonly root: string) {}

  async put(item: NewMedia): Promise<string> {
    const mediaId = checkedPut(item);
    const dir = join(this.root, item.tenantId, item.sessionId);
    const file = join(dir, mediaId);
    if (await exists(file)) return mediaId; // the first put stands
    await mkdir(dir, { recursive: true });
    const tmp = `.${mediaId}.${randomBytes(4).toString('hex')}.tmp`;
    try {
      await writeFile(join(dir, `${tmp}.json`), JSON.stringify({ mimeType: item.mimeType, meta: storedMeta(item.meta) }));
      await writeFile(join(dir, tmp), item.bytes);
      await rename(join(dir, `${tmp}.json`), `${file}.json`);
      await rename(join(dir, tmp), file);
    } finally {
      await rm(join(dir, `${tmp}.json`), { force: true });
      await rm(join(dir, tmp), { force: true });
    }
    return mediaId;
  }

  async get(ref: MediaRef): Promise<StoredMedia | null> {
    if (!wellFormedRef(ref)) return null;
    const file = join(this.root, ref.tenantId, ref.sessionId, ref.mediaId);
    let bytes: Buffer;
    try {
      bytes = await readFile(file);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw error;
    }
    const info = JSON.parse(await readFile(`${file}.json`, 'utf8')) as { mimeType: string; meta: StoredMedia['meta'] };
    return { mimeType: info.mimeType, bytes, meta: storedMeta(info.meta) };
  }
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch {
    return false;
  }
}
