import { existsSync, readFileSync } from 'node:fs';
import { PGlite } from '@electric-sql/pglite';
import { Kysely, sql } from 'kysely';
import { PGliteDialect } from '../pglite-dialect';
import { PGlitePreparedStatements, PREPARE_AFTER_RUNS } from '../pglite-prepared';

/** The names this PGlite holds (its one session's prepared statements). */
async function prepared(pglite: PGlite): Promise<string[]> {
  const { rows } = await pglite.query<{ name: string }>('select name from pg_prepared_statements order by name');
  return rows.map((r) => r.name);
}

describe('PGlite named prepared statements', () => {
  let pglite: PGlite;
  // one database for the file (a start is about 0.5 s of CPU), from the unit project's migrated one
  // (test/support/pglite-template.ts) when there is one: a new PGlite without it runs initdb, 3-5 s of CPU
  beforeAll(async () => {
    const template = process.env.COVEL_PGLITE_TEMPLATE;
    const templateBytes = template && existsSync(template) ? readFileSync(template) : undefined;
    pglite = new PGlite(templateBytes ? { loadDataDir: new Blob([templateBytes]) } : {});
  });
  afterAll(() => pglite.close());
  // each test as on a new database: no prepared statement, a new table t
  beforeEach(async () => {
    await pglite.exec(`deallocate all; drop table if exists t; create table t (id int primary key, body jsonb, note text)`);
    expect(await prepared(pglite)).toEqual([]);
  });

  it('a text with parameters is named from its second run, and its runs give what PGlite’s own query gives', async () => {
    const statements = new PGlitePreparedStatements(pglite);
    const text = 'insert into t (id, body, note) values ($1, $2, $3) returning id, body, note';
    const first = await statements.query(text, [1, JSON.stringify({ a: '👩‍👩‍👧 你好' }), null]);
    expect(await prepared(pglite)).toEqual([]);
    const second = await statements.query(text, [2, JSON.stringify({ a: 'مرحبا' }), 'x']);
    expect(PREPARE_AFTER_RUNS).toBe(2);
    expect(await prepared(pglite)).toEqual(['covel_1']);
    const third = await statements.query(text, [3, JSON.stringify([1, 2]), 'y']);
    expect(await prepared(pglite)).toEqual(['covel_1']);
    expect(first.rows).toEqual([{ id: 1, body: { a: '👩‍👩‍👧 你好' }, note: null }]);
    expect(second.rows).toEqual([{ id: 2, body: { a: 'مرحبا' }, note: 'x' }]);
    // the whole result (rows, fields, command, affected rows) as PGlite's own query gives it for the same text
    expect(third).toEqual(await pglite.query(text, [4, JSON.stringify([1, 2]), 'y']).then((r) => ({ ...r, rows: [{ ...(r.rows[0] as object), id: 3 }] })));
    await pglite.query('delete from t where id = 4');
    const select = 'select id, note from t where id >= $1 order by id';
    for (let i = 0; i < 3; i++)
      expect((await statements.query(select, [2])).rows).toEqual([
        { id: 2, note: 'x' },
        { id: 3, note: 'y' },
      ]);
    const update = 'update t set note = $1 where id >= $2';
    await statements.query(update, ['z', 3]);
    expect((await statements.query(update, ['w', 2])).affectedRows).toBe(2);
    expect(statements.size).toBe(3);
  });

  it('a text without parameters and one run once stay unnamed', async () => {
    const statements = new PGlitePreparedStatements(pglite);
    for (let i = 0; i < 3; i++) await statements.query('select count(*) from t', []);
    await statements.query('select * from t where id = $1', [1]);
    expect(await prepared(pglite)).toEqual([]);
  });

  it('a failing run gives PostgreSQL’s error with its code, and the name still serves the next run', async () => {
    const statements = new PGlitePreparedStatements(pglite);
    const text = 'insert into t (id, note) values ($1, $2)';
    await statements.query(text, [1, 'a']);
    await statements.query(text, [2, 'b']);
    await expect(statements.query(text, [1, 'again'])).rejects.toMatchObject({ code: '23505' });
    await statements.query(text, [3, 'c']);
    expect((await pglite.query('select id from t order by id')).rows).toEqual([{ id: 1 }, { id: 2 }, { id: 3 }]);
  });

  it('after DDL changes a named select’s columns: outside a transaction it runs again unnamed; inside one the error stands', async () => {
    const statements = new PGlitePreparedStatements(pglite);
    await pglite.query(`insert into t (id, note) values (1, 'a')`);
    const text = 'select * from t where id = $1';
    await statements.query(text, [1]);
    await statements.query(text, [1]);
    await pglite.exec('alter table t add column extra int');
    expect((await statements.query(text, [1])).rows).toEqual([{ id: 1, body: null, note: 'a', extra: null }]);
    const other = 'select * from t where id <> $1';
    await statements.query(other, [0]);
    await statements.query(other, [0]);
    await pglite.exec('alter table t add column more int');
    await statements.query('begin', []);
    await expect(statements.query(other, [0])).rejects.toMatchObject({ code: '0A000' });
    await statements.query('rollback', []);
    expect((await statements.query(other, [0])).rows).toEqual([{ id: 1, body: null, note: 'a', extra: null, more: null }]);
  });

  it('kysely over the dialect: transactions and repeated statements keep their results', async () => {
    const db = new Kysely<{ t: { id: number; note: string | null } }>({ dialect: new PGliteDialect(pglite) });
    for (let i = 1; i <= 4; i++)
      await db
        .insertInto('t')
        .values({ id: i, note: `n${i}` })
        .execute();
    await expect(
      db.transaction().execute(async (trx) => {
        await trx.insertInto('t').values({ id: 5, note: 'n5' }).execute();
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    await db.transaction().execute(async (trx) => {
      await trx.insertInto('t').values({ id: 6, note: 'n6' }).execute();
    });
    const rows = await db.selectFrom('t').select(['id', 'note']).where('id', '>', 2).orderBy('id').execute();
    expect(rows).toEqual([
      { id: 3, note: 'n3' },
      { id: 4, note: 'n4' },
      { id: 6, note: 'n6' },
    ]);
    expect((await sql<{ n: number }>`select count(*)::int as n from pg_prepared_statements`.execute(db)).rows[0]!.n).toBeGreaterThan(0);
  });
});
