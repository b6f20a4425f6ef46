import { readFile, stat } from 'node:fs/promises';
import { homedir } from 'node:os';
import { basename, extname, resolve } from 'node:path';
import { WORLD_IMPORT_LIMIT_BYTES } from '../../libs/engine-client';

/** Where a relative name is read from: the folder `npm run play` was typed in (npm runs the script in the package's folder and says where it was called from in INIT_CWD). */
const startFolder = (): string => process.env.INIT_CWD || process.cwd();

/**
 * The file `/import` names, as typed: a name in matching quotes loses them (a terminal pastes a
 * dropped file's path in quotes), else a backslash escapes the character after it (`my\ card.png`),
 * `~/` is the home folder, and a relative name is read from the folder the player was started in.
 */
export function importPath(arg: string, folders: { home?: string; cwd?: string } = {}): string {
  let path = arg.trim();
  const quoted = /^(['"])(.*)\1$/s.exec(path);
  if (quoted) path = quoted[2];
  else path = path.replace(/\\(.)/g, '$1');
  if (path === '~' || path.startsWith('~/')) path = `${folders.home ?? homedir()}${path.slice(1)}`;
  return resolve(folders.cwd ?? startFolder(), path);
}

/** The content type a file is sent with, from its extension (the engine goes by the content: this only makes its messages clearer). */
export function importContentType(path: string): string {
  switch (extname(path).toLowerCase()) {
    case '.png':
      return 'image/png';
    case '.json':
      return 'application/json';
    case '.zip':
      return 'application/zip';
    default:
      return 'application/octet-stream';
  }
}

export type WorldFileRead = { ok: true; bytes: Uint8Array; name: string } | { ok: false; message: string };

/**
 * A world file read for import: its bytes, or why not in words (no such file, a folder, unreadable,
 * past the engine's import limit: checked before it is read).
 */
export async function readWorldFile(path: string): Promise<WorldFileRead> {
  const name = basename(path);
  try {
    const info = await stat(path);
    if (info.isDirectory()) return { ok: false, message: `${path} is a folder: zip it first (a world folder, its WORLD.md inside, imports as a .zip)` };
    if (info.size > WORLD_IMPORT_LIMIT_BYTES)
      return { ok: false, message: `${name} is ${mebibytes(info.size)}: the engine imports files of at most ${mebibytes(WORLD_IMPORT_LIMIT_BYTES)}` };
    return { ok: true, bytes: new Uint8Array(await readFile(path)), name };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return { ok: false, message: `there is no file ${path}` };
    if (code === 'EACCES' || code === 'EPERM') return { ok: false, message: `${path} cannot be read: permission denied` };
    return { ok: false, message: `${path} cannot be read: ${error instanceof Error ? error.message : String(error)}` };
  }
}

const mebibytes = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(1).replace(/\.0$/, '')} MiB`;
