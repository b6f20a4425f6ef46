import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { acquireDataDirLock, DataDirLockedError, lockFileFor, migrateToLatest, openDatabase } from '..';

const root = join(__dirname, '..', '..', '..');

interface Helper {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | string | null>;
}

/** Runs open-data-dir.ts on `dir` in its own process; resolves once it has opened or exited. */
async function openInChild(dir: string): Promise<Helper> {
  const child = spawn(process.execPath, ['-r', './tools/register.js', join(__dirname, 'open-data-dir.ts'), dir], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  const exited = new Promise<number | string | null>((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal)));
  await new Promise<void>((resolve) => {
    child.stdout!.on('data', () => /^open \d+/m.test(out) && resolve());
    void exited.then(() => resolve());
  });
  return { child, output: () => out, exited };
}

describe('embedded data directory lock', () => {
  let base: string;
  let dataDir: string;
  beforeEach(() => {
    base = mkdtempSync(join(tmpdir(), 'covel-lock-'));
    dataDir = join(base, 'pglite');
  });
  afterEach(() => rmSync(base, { recursive: true, force: true }));

  it('refuses a second open in the same process, naming the directory and the holder, and frees it on close', async () => {
    const first = await openDatabase({ kind: 'pglite', dataDir });
    await migrateToLatest(first.db);
    const lock = JSON.parse(readFileSync(lockFileFor(dataDir), 'utf8'));
    expect(lock).toMatchObject({ pid: process.pid, hostname: expect.any(String), startedAt: expect.any(String) });

    const second = openDatabase({ kind: 'pglite', dataDir });
    await expect(second).rejects.toThrow(DataDirLockedError);
    await expect(second).rejects.toThrow(`${dataDir} is in use by process ${process.pid}`);
    await expect(second).rejects.toThrow(/Stop that process first .* or use the running server's HTTP API/);

    await first.close();
    expect(existsSync(lockFileFor(dataDir))).toBe(false);
    const again = await openDatabase({ kind: 'pglite', dataDir });
    await again.close();
  }, 30_000);

  it('refuses an opener in another process while this one holds it', async () => {
    const open = await openDatabase({ kind: 'pglite', dataDir });
    try {
      const other = await openInChild(dataDir);
      expect(await other.exited).toBe(1);
      expect(other.output()).toContain(`${dataDir} is in use by process ${process.pid}`);
      expect(other.output()).toContain("use the running server's HTTP API");
    } finally {
      await open.close();
    }
  }, 30_000);

  it('refuses this process while another holds it, and is free again once that one closes', async () => {
    const holder = await openInChild(dataDir);
    expect(holder.output()).toMatch(/^open \d+/m);
    await expect(openDatabase({ kind: 'pglite', dataDir })).rejects.toThrow(`${dataDir} is in use by process ${holder.child.pid}`);
    holder.child.kill('SIGTERM');
    expect(await holder.exited).toBe(0);
    expect(existsSync(lockFileFor(dataDir))).toBe(false);
    const open = await openDatabase({ kind: 'pglite', dataDir });
    await open.close();
  }, 30_000);

  it('takes over the stale lock of a killed process, with no manual cleanup', async () => {
    const holder = await openInChild(dataDir);
    expect(holder.output()).toMatch(/^open \d+/m);
    holder.child.kill('SIGKILL');
    await holder.exited;
    expect(JSON.parse(readFileSync(lockFileFor(dataDir), 'utf8')).pid).toBe(holder.child.pid); // left behind

    const open = await openDatabase({ kind: 'pglite', dataDir });
    try {
      expect(JSON.parse(readFileSync(lockFileFor(dataDir), 'utf8')).pid).toBe(process.pid);
      await migrateToLatest(open.db);
    } finally {
      await open.close();
    }
  }, 30_000);

  it('one lock for two spellings of the directory (a symlinked parent)', () => {
    mkdirSync(base, { recursive: true });
    symlinkSync(base, `${base}-link`);
    try {
      const lock = acquireDataDirLock(dataDir);
      try {
        expect(() => acquireDataDirLock(join(`${base}-link`, 'pglite'))).toThrow(DataDirLockedError);
      } finally {
        lock.release();
      }
    } finally {
      rmSync(`${base}-link`);
    }
  });

  it('one lock for a directory and a symlink to it (the directory itself linked), whichever is opened first', () => {
    mkdirSync(dataDir, { recursive: true });
    const link = join(base, 'linked');
    symlinkSync(dataDir, link);
    const lock = acquireDataDirLock(dataDir);
    try {
      expect(lockFileFor(link)).toBe(lockFileFor(dataDir));
      expect(() => acquireDataDirLock(link)).toThrow(DataDirLockedError);
    } finally {
      lock.release();
    }
    const viaLink = acquireDataDirLock(link);
    try {
      expect(() => acquireDataDirLock(dataDir)).toThrow(DataDirLockedError);
    } finally {
      viaLink.release();
    }
  });

  it('one lock for a symlink whose target is not created yet (PGlite creates it on first open) and that target', () => {
    const link = join(base, 'linked');
    symlinkSync(join(base, 'later', 'pglite'), link);
    const lock = acquireDataDirLock(link);
    try {
      expect(lockFileFor(link)).toBe(`${join(realpathSync(base), 'later', 'pglite')}.lock`);
      expect(() => acquireDataDirLock(join(base, 'later', 'pglite'))).toThrow(DataDirLockedError);
    } finally {
      lock.release();
    }
  });

  it('two PGlite opens through a symlinked data directory: the second is refused', async () => {
    mkdirSync(base, { recursive: true });
    const link = join(base, 'linked');
    symlinkSync(dataDir, link);
    const first = await openDatabase({ kind: 'pglite', dataDir });
    try {
      await expect(openDatabase({ kind: 'pglite', dataDir: link })).rejects.toThrow(DataDirLockedError);
    } finally {
      await first.close();
    }
  }, 30_000);

  describe('who counts as a live holder', () => {
    const lockWith = (holder: object) => {
      mkdirSync(base, { recursive: true });
      writeFileSync(lockFileFor(dataDir), JSON.stringify({ hostname: hostname(), startedAt: '2020-01-01T00:00:00.000Z', token: 'old', ...holder }));
    };
    const takeOver = () => {
      const lock = acquireDataDirLock(dataDir);
      lock.release();
    };

    it('a live process on this host holds it', () => {
      lockWith({ pid: process.ppid });
      expect(takeOver).toThrow(`is in use by process ${process.ppid}`);
    });

    it('a lock from another host is never taken over', () => {
      lockWith({ pid: process.pid, hostname: 'elsewhere' });
      expect(takeOver).toThrow(`is in use by process ${process.pid} on elsewhere`);
    });

    it("this process's pid with a token it does not hold is a previous incarnation's (containers reuse pids)", () => {
      lockWith({ pid: process.pid });
      expect(takeOver).not.toThrow();
    });

    (process.platform === 'linux' ? it : it.skip)('a pid now running another process (reused after a crash) is stale on Linux', () => {
      lockWith({ pid: process.ppid, processStart: 'another-boot:12345' });
      expect(takeOver).not.toThrow();
    });

    it('an unreadable lock file is stale', () => {
      mkdirSync(base, { recursive: true });
      writeFileSync(lockFileFor(dataDir), 'garbage');
      expect(takeOver).not.toThrow();
      expect(existsSync(lockFileFor(dataDir))).toBe(false);
    });
  });

  it('leaves an in-memory database unlocked', async () => {
    const a = await openDatabase({ kind: 'pglite' });
    const b = await openDatabase({ kind: 'pglite' });
    await Promise.all([migrateToLatest(a.db), migrateToLatest(b.db)]);
    await Promise.all([a.close(), b.close()]);
  }, 30_000);
});
