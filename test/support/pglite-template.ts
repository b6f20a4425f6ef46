import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Jest global set-up of the unit project: a PGlite database with every migration applied, dumped
 * once to a file named by the migrations' content (and this recipe), and named in
 * `COVEL_PGLITE_TEMPLATE` so that every PGlite database the tests open starts from it
 * (libs/events/database.ts) instead of running the migrations again (about 3.5 s of CPU each, on
 * over a hundred databases).
 *
 * Every database start unpacks the whole dump into its directory, so the dump is kept small (16 MB
 * instead of 41 MB, 500 files instead of 1,100; a start costs about half the CPU): 1 MB WAL segments
 * instead of 16 MB, no template0/template1 databases (nothing in the unit project creates a
 * database), and a checkpoint just before the dump so a start has no WAL to replay. Its
 * `shared_buffers` is 16 MB instead of 128 MB: PostgreSQL clears its shared memory at every start.
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
    await pglite.exec(`alter system set shared_buffers = '16MB'`);
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
