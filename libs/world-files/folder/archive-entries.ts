import { fflate } from './fflate';
import { failure, type ImportWorldArchiveFailure, type WorldArchiveLimits } from './import-result';

/** An entry as the zip's central directory declares it. */
export interface ArchiveEntry {
  name: string;
  /** Uncompressed bytes, as declared (the inflating step holds the entry to it). */
  size: number;
  /** 0 stored, 8 deflated; anything else cannot be read. */
  compression: number;
}

class TooManyEntries extends Error {}

/**
 * The entries of a zip from its central directory, nothing inflated: refused when the bytes are
 * not a zip, or its local file headers do not name the same entries (two tools could read such a
 * zip differently; a damaged directory reads as garbage entries) (`BAD_ARCHIVE`), when there are
 * more than `maxEntries` or they declare more than `maxUncompressedBytes` together
 * (`ARCHIVE_TOO_LARGE`), or when a name is unsafe or repeated (`BAD_ARCHIVE`).
 */
export function archiveEntries(bytes: Uint8Array, limits: WorldArchiveLimits): { ok: true; entries: ArchiveEntry[] } | ImportWorldArchiveFailure {
  const entries: ArchiveEntry[] = [];
  try {
    fflate().unzipSync(bytes, {
      filter: (file) => {
        if (entries.length >= limits.maxEntries) throw new TooManyEntries();
        entries.push({ name: file.name, size: file.originalSize, compression: file.compression });
        return false;
      },
    });
  } catch (error) {
    if (error instanceof TooManyEntries)
      return failure('ARCHIVE_TOO_LARGE', [{ path: '(archive)', message: `more than ${limits.maxEntries} entries (the limit maxEntries)` }]);
    return failure('BAD_ARCHIVE', [{ path: '(archive)', message: `not a readable zip: ${error instanceof Error ? error.message : String(error)}` }]);
  }
  const local = localNames(bytes, limits.maxEntries);
  const names = entries.map((e) => e.name);
  if (local === null || !sameNames(local, names)) {
    const message = 'not a readable zip: its local file headers do not name the entries of its central directory';
    return failure('BAD_ARCHIVE', [{ path: '(archive)', message }]);
  }
  const declared = entries.reduce((sum, e) => sum + e.size, 0);
  if (!(declared <= limits.maxUncompressedBytes))
    return failure('ARCHIVE_TOO_LARGE', [
      {
        path: '(archive)',
        message: `its entries declare ${declared} uncompressed bytes, past ${limits.maxUncompressedBytes} (the limit maxUncompressedBytes)`,
      },
    ]);
  const seen = new Set<string>();
  const issues = entries.flatMap(({ name }) => {
    const problem = seen.has(name) ? 'appears more than once' : nameProblem(name);
    seen.add(name);
    return problem === null ? [] : [{ path: name, message: problem }];
  });
  return issues.length > 0 ? failure('BAD_ARCHIVE', issues) : { ok: true, entries };
}

/**
 * What makes an entry name unsafe to take as a path inside the world folder, or null: an absolute
 * path, a drive letter or other colon, a backslash (a Windows separator that could hide a `..`),
 * a `.`, `..` or empty segment, a `~` first segment, a control character.
 */
export function nameProblem(name: string): string | null {
  if (name === '') return 'an empty name';
  if (/\p{Cc}/u.test(name)) return 'a control character in the name';
  if (name.startsWith('/')) return 'an absolute path';
  if (name.includes('\\')) return 'a backslash in the name (a Windows path separator)';
  if (name.includes(':')) return 'a colon in the name (a drive letter or a Windows stream)';
  const segments = name.replace(/\/$/, '').split('/');
  if (segments.some((s) => s === '' || s === '.' || s === '..'))
    return 'an empty, "." or ".." path segment (a path outside the folder, or not in its plain form)';
  if (segments[0] === '~') return 'a path from a home folder';
  return null;
}

/** The names of the zip's local file headers, in order, nothing inflated; null when they cannot be read or there are more than `max`. */
function localNames(bytes: Uint8Array, max: number): string[] | null {
  const names: string[] = [];
  const unzip = new (fflate().Unzip)((file) => {
    if (names.length >= max) throw new TooManyEntries();
    names.push(file.name);
  });
  try {
    unzip.push(bytes, true);
    return names;
  } catch {
    return null;
  }
}

function sameNames(a: readonly string[], b: readonly string[]): boolean {
  const [x, y] = [[...a].sort(), [...b].sort()];
  return x.length === y.length && x.every((name, i) => name === y[i]);
}
