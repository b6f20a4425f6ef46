import { type KyselyPlugin, Migrator, type RootOperationNode, sql } from 'kysely';
import { migrations } from '../../../migrations';
import { migrateToLatest, openDatabase, type OpenDatabase } from '..';

/** Records each query's operation tree (kysely's plugins see every query of a `withPlugin` database, the migrator's included). */
function recorder(): { plugin: KyselyPlugin; queries: string[] } {
  const queries: string[] = [];
  const plugin: KyselyPlugin = {
    transformQuery: ({ node }: { node: RootOperationNode }) => {
      queries.push(JSON.stringify(node));
      return node;
    },
    transformResult: async ({ result }) => result,
  };
  return { plugin, queries };
}

describe('migrateToLatest (PGlite)', () => {
  let open: OpenDatabase;
  beforeEach(async () => {
    open = await openDatabase({ kind: 'pglite' });
    await migrateToLatest(open.db);
  });
  afterEach(() => open.close());

  it('leaves a database that applied every migration as it is, without reading the catalogs or taking the migration lock', async () => {
    const { plugin, queries } = recorder();
    expect(await migrateToLatest(open.db.withPlugin(plugin))).toEqual([]);
    expect(queries.length).toBeGreaterThan(0);
    for (const query of queries) {
      expect(query).not.toContain('pg_attribute'); // kysely's introspector, which the migrator runs first
      expect(query).not.toContain('advisory_lock');
      expect(query).not.toContain('kysely_migration_lock');
    }
    const applied = await sql<{ name: string }>`select name from kysely_migration order by name`.execute(open.db);
    expect(applied.rows.map((r) => r.name)).toEqual(Object.keys(migrations).sort());
  });

  it('applies what a database lacks', async () => {
    const names = Object.keys(migrations).sort();
    const migrator = new Migrator({ db: open.db, provider: { getMigrations: async () => migrations } });
    expect((await migrator.migrateDown()).error).toBeUndefined();
    expect(await migrateToLatest(open.db)).toEqual([names.at(-1)]);
  });

  it('leaves a database that applied a migration it does not know to the migrator, which refuses it', async () => {
    await sql`insert into kysely_migration (name, timestamp) values ('9999_from_a_newer_version', ${new Date().toISOString()})`.execute(open.db);
    await expect(migrateToLatest(open.db)).rejects.toThrow(/9999_from_a_newer_version/);
  });
});
