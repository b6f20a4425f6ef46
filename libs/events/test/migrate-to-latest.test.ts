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

describe('a new PGlite database', () => {
  it('holds every migration and no rows, whatever a database opened before it wrote', async () => {
    const first = await openDatabase({ kind: 'pglite' });
    await migrateToLatest(first.db);
    await sql`insert into kysely_migration (name, timestamp) values ('9999_written_by_another', ${new Date().toISOString()})`.execute(first.db);
    await first.close();

    const open = await openDatabase({ kind: 'pglite' });
    try {
      const applied = await sql<{ name: string }>`select name from kysely_migration order by name`.execute(open.db);
      expect(applied.rows.map((r) => r.name)).toEqual(Object.keys(migrations).sort());
      const tables = await sql<{ name: string }>`
        select table_name as name from information_schema.tables
        where table_schema = 'public' and table_type = 'BASE TABLE' and table_name not like 'kysely_migration%'`.execute(open.db);
      expect(tables.rows.length).toBeGreaterThan(0);
      const counts: Record<string, number> = {};
      for (const { name } of tables.rows) {
        const { rows } = await sql<{ n: number }>`select count(*)::int as n from ${sql.table(name)}`.execute(open.db);
        if (rows[0]!.n !== 0) counts[name] = rows[0]!.n;
      }
      expect(counts).toEqual({});
    } finally {
      await open.close();
    }
  });
});
