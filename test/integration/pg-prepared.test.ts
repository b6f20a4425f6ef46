import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { Client } from 'pg';
import { EventStore, inlineProjections, migrateToLatest, type OpenDatabase, openDatabase, pgCounts, statementLabel } from '../../libs/events';
import { PREPARE_AFTER_SENDS, prepareHotStatements } from '../../libs/events/pg-prepared';
import { barrierPassed, sessionCreated } from '../support/log-events';
import { createTestDatabase } from '../support/stack';

interface Prepared {
  name: string;
  statement: string;
  runs: number;
}

/**
 * The statements a process sends over and over go to PostgreSQL as named prepared statements
 * (libs/events/pg-prepared.ts, issue 33): parsed and planned once per connection. Read from the
 * server's own `pg_prepared_statements` of the connection, on the real PostgreSQL.
 */
describe('named prepared statements (real PostgreSQL)', () => {
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  let open: OpenDatabase;
  beforeAll(async () => {
    database = await createTestDatabase();
    // one connection: every statement below, and the reads of pg_prepared_statements, share it
    open = await openDatabase({ kind: 'postgres', url: database.url, poolSize: 1 });
    await migrateToLatest(open.db);
  });
  afterAll(async () => {
    await open.close();
    await database.drop();
  });

  const prepared = async (): Promise<Prepared[]> =>
    (await sql<Prepared>`select name, statement, (generic_plans + custom_plans)::int as runs from pg_prepared_statements where not from_sql`.execute(open.db))
      .rows;

  it('sends the append as a named statement, each later run without a new parse; the counts stay by text', async () => {
    const store = new EventStore(open.db, { inline: inlineProjections });
    const streamId = randomUUID();
    await store.append({ tenantId: 't', streamId, expectedVersion: 0, events: [sessionCreated(streamId)] });
    await store.append({ tenantId: 't', streamId, expectedVersion: 1, events: [barrierPassed('e1')] });
    const appends = async () => (await prepared()).filter((p) => p.statement.includes('pg_advisory_xact_lock'));
    // sent twice by now (the creation's append has the same text): prepared under a name
    const [warm] = await appends();
    expect(warm.name).toMatch(/^covel_\d+$/);
    const label = statementLabel(warm.statement);
    const before = pgCounts();
    for (let v = 2; v <= 4; v++) await store.append({ tenantId: 't', streamId, expectedVersion: v, events: [barrierPassed(`e${v}`)] });
    // the same one statement, run three more times (no other name made for the text)
    expect(await appends()).toEqual([{ ...warm, runs: warm.runs + 3 }]);
    // covel_pg_statements_total still counts each send under the statement's text
    expect((pgCounts().statements.get(label) ?? 0) - (before.statements.get(label) ?? 0)).toBe(3);
    expect((await store.readStream(streamId)).map((e) => e.streamVersion)).toEqual([1, 2, 3, 4, 5]);
  });

  it('leaves one-off texts and texts without parameters unnamed', async () => {
    const tag = randomUUID();
    await sql`select ${tag}::text as once`.execute(open.db);
    for (let i = 0; i < 3; i++) await sql`select 'no parameters' as constant`.execute(open.db);
    const statements = (await prepared()).map((p) => p.statement);
    expect(statements.filter((s) => s.includes('as once') || s.includes('no parameters'))).toEqual([]);
  });
});

describe('named prepared statements: bounds and a changed result type (real PostgreSQL)', () => {
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  let client: Client;
  beforeAll(async () => {
    database = await createTestDatabase();
    client = new Client({ connectionString: database.url });
    await client.connect();
    await client.query('create table t (id int primary key)');
    await client.query('insert into t values (1)');
    prepareHotStatements(client, { perConnection: 2 });
  });
  afterAll(async () => {
    await client.end();
    await database.drop();
  });

  const names = async () =>
    (await client.query<{ statement: string }>('select statement from pg_prepared_statements where not from_sql order by name')).rows.map((r) => r.statement);

  /** Runs `use` on a wrapped connection of its own (its own bound of names, none made yet), ended after. */
  async function onNewConnection(use: (c2: Client) => Promise<void>): Promise<void> {
    const c2 = new Client({ connectionString: database.url });
    await c2.connect();
    try {
      prepareHotStatements(c2);
      await use(c2);
    } finally {
      await c2.end();
    }
  }

  it('names a text from its PREPARE_AFTER_SENDS-th send in the process on', async () => {
    await onNewConnection(async (c2) => {
      const text = 'select $1::int * 10 as ten';
      const runs = async () =>
        (await c2.query<{ runs: number }>('select (generic_plans + custom_plans)::int as runs from pg_prepared_statements where statement = $1', [text]))
          .rows[0]?.runs;
      for (let i = 1; i < PREPARE_AFTER_SENDS; i++) await c2.query(text, [i]);
      expect(await runs()).toBeUndefined();
      expect((await c2.query(text, [5])).rows).toEqual([{ ten: 50 }]);
      expect(await runs()).toBe(1);
    });
  });

  it('names at most its bound of texts on a connection; past it a text goes unnamed (and still runs)', async () => {
    const texts = ['select $1::int + 1 as a', 'select $1::int + 2 as b', 'select $1::int + 3 as c'];
    for (const text of texts) for (let i = 0; i < 3; i++) expect((await client.query(text, [i])).rows).toHaveLength(1);
    expect(await names()).toEqual(texts.slice(0, 2));
  });

  it('after DDL that changes a named statement result columns: outside a transaction sent again unnamed, inside one the error stands once', async () => {
    // the bound of 2 is taken: a fresh connection for this case
    await onNewConnection(async (c2) => {
      const outside = 'select * from t where id = $1';
      const inside = 'select * from t where id = $1 and true';
      for (let i = 0; i < 3; i++) {
        await c2.query(outside, [1]);
        await c2.query(inside, [1]);
      }
      await client.query('alter table t add column x int default 7');
      expect((await c2.query(outside, [1])).rows).toEqual([{ id: 1, x: 7 }]);
      await c2.query('begin', []);
      await expect(c2.query(inside, [1])).rejects.toMatchObject({ code: '0A000' });
      await c2.query('rollback', []);
      // the spoiled name is not used again: the text runs unnamed from then on
      expect((await c2.query(inside, [1])).rows).toEqual([{ id: 1, x: 7 }]);
      expect((await c2.query(outside, [1])).rows).toEqual([{ id: 1, x: 7 }]);
    });
  });
});
