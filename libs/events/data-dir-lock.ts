import { randomBytes } from 'node:crypto';
import { existsSync, linkSync, lstatSync, mkdirSync, readFileSync, readlinkSync, realpathSync, unlinkSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { z } from 'zod';
import { DataDirLockedError } from './errors';

/**
 * An exclusive lock on an embedded (PGlite) data directory: the file `<dataDir>.lock` beside it,
 * holding the holder's pid, hostname, start time and a random token.
 *
 * - Created atomically with its full content (written to a private file, then hard-linked to the
 *   lock name, which fails if the name exists), so a reader never sees a half-written lock.
 * - Released on close and on process exit. A lock whose pid is not alive on this host (kill -9,
 *   power loss) is stale and taken over; a lock naming this process's pid but not one of its own
 *   tokens is a previous incarnation's (containers reuse pid 1) and is stale too.
 * - A holder is alive when its pid runs on this host and is not a zombie; on Linux its start time
 *   (from /proc, with the boot id) must match too, so a pid reused after a crash is not mistaken for it.
 * - Known limits: where /proc is missing (macOS, Windows), a dead holder's pid reused by an
 *   unrelated live process makes the lock look held; a lock written on another host (a shared
 *   volume) is never taken over. The error names the lock file to delete in both cases.
 */
const Holder = z.object({
  pid: z.number().int().positive(),
  hostname: z.string(),
  startedAt: z.string(),
  token: z.string(),
  /** Linux: boot id and start time of the holder process, so that a reused pid is told apart. */
  processStart: z.string().optional(),
});
type Holder = z.infer<typeof Holder>;

export interface DataDirLock {
  readonly file: string;
  readonly holder: Holder;
  /** Removes the lock file if it is still this lock's; idempotent. */
  release(): void;
}

/** Tokens of the locks this process holds now. */
const heldTokens = new Set<string>();

/**
 * `<dataDir>.lock` beside the directory's real path: every symlink on the way resolved (the parent's
 * and the directory's own), so that two spellings of one directory share a lock. A directory that
 * does not exist yet resolves through its parent; a symlink to one that does not exist yet (PGlite
 * creates it on first open) through the link's target.
 */
export function lockFileFor(dataDir: string): string {
  return `${realDirectory(resolve(dataDir))}.lock`;
}

/** How many symlinks in a row `realDirectory` follows before it stops (as the system's ELOOP would). */
const MAX_LINKS = 40;

/** The real path of `dir`, existing or not: symlinks resolved as far as the path exists. */
function realDirectory(dir: string, links = 0): string {
  try {
    return realpathSync(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  const parent = dirname(dir);
  const realParent = parent === dir ? parent : realDirectory(parent, links);
  const here = join(realParent, basename(dir));
  // a dangling symlink (its target not created yet): the lock is the target's
  const target = symlinkTarget(here);
  if (target === null || links >= MAX_LINKS) return here;
  return realDirectory(resolve(realParent, target), links + 1);
}

function symlinkTarget(path: string): string | null {
  try {
    return lstatSync(path).isSymbolicLink() ? readlinkSync(path) : null;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT' || (error as NodeJS.ErrnoException).code === 'ENOTDIR') return null;
    throw error;
  }
}

export function acquireDataDirLock(dataDir: string): DataDirLock {
  const dir = resolve(dataDir);
  mkdirSync(dirname(dir), { recursive: true });
  const file = lockFileFor(dir);
  mkdirSync(dirname(file), { recursive: true }); // a symlinked directory's lock is beside its target
  const holder = newHolder();
  // a stale lock is removed and the create retried; a third collision means others are racing for it
  for (let attempt = 0; attempt < 3; attempt++) {
    if (createExclusive(file, holder)) return held(file, holder);
    const current = readHolder(file);
    if (current === 'absent') continue;
    if (current !== 'unreadable' && isAlive(current)) throw new DataDirLockedError(dir, file, publicHolder(current));
    removeStale(dir, file, current);
  }
  throw new DataDirLockedError(dir, file, null);
}

function newHolder(): Holder {
  const processStart = linuxProcessStart(process.pid) ?? undefined;
  return { pid: process.pid, hostname: hostname(), startedAt: new Date().toISOString(), token: randomBytes(12).toString('hex'), processStart };
}

function held(file: string, holder: Holder): DataDirLock {
  heldTokens.add(holder.token);
  const release = () => {
    if (!heldTokens.delete(holder.token)) return;
    process.off('exit', release);
    const current = readHolder(file);
    if (current !== 'absent' && current !== 'unreadable' && current.token === holder.token) unlinkQuietly(file);
  };
  process.on('exit', release);
  return { file, holder, release };
}

/** Creates `file` with the holder's content, atomically; false if it exists. */
function createExclusive(file: string, holder: Holder): boolean {
  const draft = `${file}.${holder.pid}.${holder.token}.tmp`;
  writeFileSync(draft, `${JSON.stringify(holder)}\n`, { flag: 'wx', mode: 0o644 });
  try {
    linkSync(draft, file);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  } finally {
    unlinkQuietly(draft);
  }
}

function readHolder(file: string): Holder | 'absent' | 'unreadable' {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 'absent';
    throw error;
  }
  try {
    const parsed = Holder.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : 'unreadable';
  } catch {
    return 'unreadable';
  }
}

function isAlive(holder: Holder): boolean {
  if (holder.hostname !== hostname()) return true; // cannot tell from here
  if (holder.pid === process.pid) return heldTokens.has(holder.token);
  const start = linuxProcessStart(holder.pid);
  if (start === null) return false;
  if (start !== undefined) return holder.processStart === undefined || holder.processStart === start;
  try {
    process.kill(holder.pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'; // alive, another user's
  }
}

let bootId: string | undefined;

/**
 * Linux: `<boot id>:<start time>` of a live process; null when there is no such process or it is a
 * zombie (killed, not yet reaped: `kill(pid, 0)` still succeeds on it); undefined without /proc.
 */
function linuxProcessStart(pid: number): string | null | undefined {
  if (process.platform !== 'linux') return undefined;
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT' || (error as NodeJS.ErrnoException).code === 'ESRCH')
      return existsSync('/proc/self/stat') ? null : undefined;
    return undefined;
  }
  // fields after the command name (which may hold spaces and parentheses): state is field 3, starttime field 22
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  if (fields[0] === 'Z' || fields[0] === 'X') return null;
  bootId ??= readBootId();
  return `${bootId}:${fields[19]}`;
}

function readBootId(): string {
  try {
    return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
  } catch {
    return '';
  }
}

/**
 * Removes a stale lock, under a short-lived takeover lock so that two processes finding the same
 * stale lock cannot both remove it (the second would delete the first one's fresh lock).
 */
function removeStale(dir: string, file: string, stale: Holder | 'unreadable') {
  const takeover = `${file}.takeover`;
  if (!createExclusive(takeover, newHolder())) {
    const other = readHolder(takeover);
    if (other !== 'absent' && other !== 'unreadable' && isAlive(other)) throw new DataDirLockedError(dir, file, publicHolder(other));
    unlinkQuietly(takeover); // its taker died mid-takeover
    return;
  }
  try {
    const current = readHolder(file);
    const unchanged = current === 'unreadable' ? stale === 'unreadable' : current !== 'absent' && stale !== 'unreadable' && current.token === stale.token;
    if (unchanged) unlinkQuietly(file);
  } finally {
    unlinkQuietly(takeover);
  }
}

function publicHolder({ pid, hostname, startedAt }: Holder) {
  return { pid, hostname, startedAt };
}

function unlinkQuietly(file: string) {
  try {
    unlinkSync(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
}
