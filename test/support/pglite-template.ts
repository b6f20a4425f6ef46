import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, renameSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Jest global set-up of the unit and integration projects: a PGlite database with every migration applied, dumped
 * once to a file named by the migrations' content (and this recipe), and named in
 * `COVEL_PGLITE_TEMPLATE` so that every PGlite database the tests open starts from it
 * (libs/events/database.ts) instead of running the migrations again (about 3.5 s of CPU each, on
 * over a hundred databases).
 *
 * Every database start unpacks the whole dump into its directory, so the dump is kept small (16 MB
 * instead of 41 MB, 500 files instead of 1,100; a start costs about half the CPU): 1 MB WAL segments
 * instead of 16 MB, no template0/template1 databases (no test creates a PGlite
 * database), and a checkpoint just before the dump so a start has no WAL to replay. Its
 * `shared_buffers` is 4 MB instead of 128 MB and `max_connections` 5: PostgreSQL clears its shared memory
 * at every start (8 MB of it then; 24 MB with 16 MB of buffers).
 *
 * The same database before the first migration is dumped too, named in `COVEL_PGLITE_EMPTY_TEMPLATE`:
 * the migration tests start from it (test/support/empty-pglite.ts) instead of running PostgreSQL's
 * initdb (about 3 s of CPU; a start from the dump about 0.5 s).
 */
export default async function pgliteTemplate(): Promise<void> {
  const dir = join(__dirname, '..', '..', 'migrations');
  const hash = createHash('sha256').update(readFileSync(__filename));
  for (const name of readdirSync(dir).sort()) hash.update(name).update(readFileSync(join(dir, name)));
  const digest = hash.digest('hex').slice(0, 16);
  const file = join(tmpdir(), `covel-pglite-template-${digest}.tar`);
  const empty = join(tmpdir(), `covel-pglite-empty-${digest}.tar`);
  // CI starts the unit and integration projects at once: one of them makes the dumps, the other waits for them
  if (!existsSync(file) || !existsSync(empty)) await madeByAnother(`${file}.making`, () => existsSync(file) && existsSync(empty));
  if (!existsSync(file) || !existsSync(empty)) {
    // made without a template (the variable may name a stale one), then moved into place whole
    delete process.env.COVEL_PGLITE_TEMPLATE;
    const { PGlite } = await import('@electric-sql/pglite');
    const { Kysely } = await import('kysely');
    const { migrateToLatest } = await import('../../libs/events');
    const { PGliteDialect } = await import('../../libs/events/pglite-dialect');
    const pglite = new PGlite({ initDbStartParams: ['--wal-segsize=1'] });
    await pglite.waitReady;
    for (const name of ['template0', 'template1']) {
      await pglite.exec(`update pg_database set datistemplate = false where datname = '${name}'`);
      await pglite.exec(`drop database ${name}`);
    }
    // PostgreSQL clears its shared memory at every start: 8 MB of it instead of 24 MB saves about 90 ms of
    // CPU a start (of about 500); a single-user PGlite needs few connection slots
    await pglite.exec(`alter system set shared_buffers = '4MB'`);
    await pglite.exec(`alter system set max_connections = 5`);
    const dumpTo = async (target: string) => {
      await pglite.exec('checkpoint');
      const dump = await pglite.dumpDataDir('none');
      const partial = `${target}.${process.pid}.partial`;
      writeFileSync(partial, Buffer.from(await dump.arrayBuffer()));
      renameSync(partial, target);
    };
    await dumpTo(empty);
    await migrateToLatest(new Kysely({ dialect: new PGliteDialect(pglite) }) as never);
    await dumpTo(file);
    await pglite.close();
  }
  process.env.COVEL_PGLITE_TEMPLATE = file;
  process.env.COVEL_PGLITE_EMPTY_TEMPLATE = empty;
}

/**
 * Whether another run is making the dumps (it holds `lock`, which names its process): then waits
 * until `ready`. A lock whose process is gone (a run interrupted while making them: Ctrl-C leaves
 * the file) or older than two minutes is taken over. Otherwise takes the lock, released when this
 * process exits, and returns at once.
 */
async function madeByAnother(lock: string, ready: () => boolean): Promise<void> {
  const holder = () => {
    try {
      return { pid: Number(readFileSync(lock, 'utf8')), age: Date.now() - statSync(lock).mtimeMs };
    } catch {
      return undefined; // gone: try to take it
    }
  };
  const alive = (pid: number) => {
    if (!Number.isSafeInteger(pid) || pid <= 0) return false;
    try {
      process.kill(pid, 0);
      return true;
    } catch (error) {
      return (error as NodeJS.ErrnoException).code === 'EPERM';
    }
  };
  let told = false;
  for (;;) {
    try {
      writeFileSync(lock, String(process.pid), { flag: 'wx' });
      process.once('exit', () => {
        try {
          unlinkSync(lock);
        } catch {
          // gone already
        }
      });
      return;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') return;
    }
    if (ready()) return;
    const held = holder();
    // a file just made may not hold its pid yet: only an old one without a live process is stale
    if (held && ((!alive(held.pid) && held.age > 1_000) || held.age > 120_000)) {
      try {
        unlinkSync(lock);
      } catch {
        // another waiter took it over first
      }
      continue;
    }
    if (!told && held) {
      process.stdout.write(`waiting for process ${held.pid} to make the PGlite template (${lock})\n`);
      told = true;
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}
