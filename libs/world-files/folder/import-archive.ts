import { parseWorldFile, PluginManifestError, splitFrontMatter, WORLD_LIMITS } from '../../plugins-sdk';
import { type ArchiveEntry, archiveEntries } from './archive-entries';
import { REPLY_BOOK_FILE, WORLD_FILE } from './archive-files';
import { failure, type ImportWorldArchiveResult, WORLD_ARCHIVE_LIMITS, type WorldArchiveLimits } from './import-result';
import { inflateEntries } from './inflate-entries';
import { isWorldId } from './world-id';

/**
 * Reads a world folder from zip bytes (what {@link exportWorldArchive} writes, or the folder zipped
 * by any tool): exactly one WORLD.md, at the root or in one top folder, read as the file loader
 * reads it (`parseWorldFile`), and the `emulator-replies.json` beside it when there is one. Other
 * files are left alone. Nothing is written to disk. Every failure is a value naming the entry or
 * the field (see {@link ImportWorldArchiveResult}); the caps of `limits` are checked from the
 * zip's headers first, then while inflating.
 */
export function importWorldArchive(bytes: Uint8Array, limits: WorldArchiveLimits = WORLD_ARCHIVE_LIMITS): ImportWorldArchiveResult {
  const listed = archiveEntries(bytes, limits);
  if (!listed.ok) return listed;
  const worldFiles = listed.entries.filter((e) => e.name === WORLD_FILE || /^[^/]+\/WORLD\.md$/.test(e.name));
  if (worldFiles.length !== 1) return failure('BAD_ARCHIVE', [{ path: '(archive)', message: worldFileProblem(worldFiles, listed.entries) }]);
  const worldFile = worldFiles[0];
  const folder = worldFile.name === WORLD_FILE ? '' : worldFile.name.slice(0, -WORLD_FILE.length - 1);
  const replyBook = listed.entries.find((e) => e.name === (folder === '' ? REPLY_BOOK_FILE : `${folder}/${REPLY_BOOK_FILE}`));
  const inflated = inflateEntries(bytes, replyBook ? [worldFile, replyBook] : [worldFile]);
  if (!inflated.ok) return inflated;

  const text = utf8(inflated.files.get(worldFile.name)!);
  if (text === null) return failure('INVALID_WORLD', [{ path: worldFile.name, message: 'is not UTF-8 text' }]);
  const world = readWorld(text, worldFile.name, isWorldId(folder) ? folder : null);
  if (!world.ok) return world;
  const bytesAsJson = Buffer.byteLength(JSON.stringify(world.document));
  if (bytesAsJson > WORLD_LIMITS.documentBytes)
    return failure('ARCHIVE_TOO_LARGE', [
      { path: '(document)', message: `is ${bytesAsJson} bytes as JSON, past ${WORLD_LIMITS.documentBytes} (the limit documentBytes)` },
    ]);
  if (!replyBook) return world;
  const replies = readJson(inflated.files.get(replyBook.name)!);
  if (!replies.ok) return failure('INVALID_WORLD', [{ path: replyBook.name, message: replies.message }]);
  return { ...world, replyBook: replies.value };
}

function worldFileProblem(found: readonly ArchiveEntry[], entries: readonly ArchiveEntry[]): string {
  if (found.length > 1) return `more than one ${WORLD_FILE}: ${found.map((e) => e.name).join(', ')}`;
  const deeper = entries.filter((e) => e.name.endsWith(`/${WORLD_FILE}`)).map((e) => e.name);
  return `no ${WORLD_FILE} at the root or in one top folder${deeper.length > 0 ? ` (found deeper: ${deeper.slice(0, 5).join(', ')})` : ''}`;
}

/**
 * The WORLD.md's id and document. The id is the front matter's (checked by the loader), else the
 * folder's name (`folderId`, null when the folder's name is not a world id or there is no folder).
 */
function readWorld(text: string, file: string, folderId: string | null): ImportWorldArchiveResult {
  try {
    const { data } = splitFrontMatter(text, file);
    const ownId = data !== null && typeof data === 'object' && Object.hasOwn(data, 'id');
    // without an id of its own nor a folder's, the document is read under a stand-in id, not returned
    const { id, document } = parseWorldFile(text, file, ownId ? undefined : (folderId ?? 'world'));
    return { ok: true, id: ownId || folderId !== null ? id : null, document };
  } catch (error) {
    if (error instanceof PluginManifestError)
      return failure(
        'INVALID_WORLD',
        error.issues.map((i) => ({ path: i.path, message: i.message })),
      );
    if (error instanceof RangeError) return failure('INVALID_WORLD', [{ path: file, message: `cannot be read: ${error.message}` }]);
    throw error;
  }
}

function utf8(bytes: Uint8Array): string | null {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return null;
  }
}

function readJson(bytes: Uint8Array): { ok: true; value: unknown } | { ok: false; message: string } {
  const text = utf8(bytes);
  if (text === null) return { ok: false, message: 'is not UTF-8 text' };
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (error) {
    return { ok: false, message: `is not JSON: ${error instanceof Error ? error.message : String(error)}` };
  }
}
