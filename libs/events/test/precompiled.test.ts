import { type CompiledQuery, sql } from 'kysely';
import { type Database, migrateToLatest, openDatabase, type OpenDatabase } from '..';
import { precompiled } from '../precompiled';

describe('precompiled (PGlite)', () => {
  let open: OpenDatabase;
  beforeAll(async () => {
    open = await openDatabase({ kind: 'pglite' });
    await migrateToLatest(open.db);
  });
  afterAll(() => open.close());

  const insert = precompiled<Database, { id: string; tenant: string; at: Date; version: number }>(['id', 'tenant', 'at', 'version'], (db, p) =>
    db
      .insertInto('executions')
      .values({
        execution_id: p.id,
        tenant_id: p.tenant,
        session_id: 's1',
        turn_id: 'u1',
        status: 'queued',
        attempts: 0,
        worker_id: null,
        submitted_version: p.version,
        error_code: null,
        error_message: null,
        submitted_at: p.at,
        updated_at: p.at,
      })
      .onConflict((oc) => oc.column('execution_id').doNothing()),
  );

  it('sends the SQL kysely builds, with each run its own parameters in their places', async () => {
    const at = new Date('2026-01-02T03:04:05.678Z');
    const built = open.db
      .insertInto('executions')
      .values({
        execution_id: 'e0',
        tenant_id: 't1',
        session_id: 's1',
        turn_id: 'u1',
        status: 'queued',
        attempts: 0,
        worker_id: null,
        submitted_version: 3,
        error_code: null,
        error_message: null,
        submitted_at: at,
        updated_at: at,
      })
      .onConflict((oc) => oc.column('execution_id').doNothing())
      .compile();
    const sent: { sql: string; parameters: readonly unknown[] }[] = [];
    // the statements sent, seen on the instance's own executeQuery (restored after)
    const db = open.db as typeof open.db & { executeQuery: typeof open.db.executeQuery };
    const original = db.executeQuery.bind(db);
    db.executeQuery = ((q: CompiledQuery) => {
      sent.push({ sql: q.sql, parameters: q.parameters });
      return original(q);
    }) as typeof db.executeQuery;
    try {
      await insert(db, { id: 'e0', tenant: 't1', at, version: 3 });
      await insert(db, { id: 'e1', tenant: 't2', at, version: 4 });
    } finally {
      delete (db as { executeQuery?: unknown }).executeQuery;
    }
    expect(sent[0]).toEqual({ sql: built.sql, parameters: built.parameters });
    expect(sent[1].sql).toBe(built.sql);
    expect(sent[1].parameters).toEqual(built.parameters.map((v) => (v === 'e0' ? 'e1' : v === 't1' ? 't2' : v === 3 ? 4 : v)));
    const rows = await open.db.selectFrom('executions').select(['execution_id', 'tenant_id', 'submitted_version', 'status']).orderBy('execution_id').execute();
    expect(rows).toEqual([
      { execution_id: 'e0', tenant_id: 't1', submitted_version: 3, status: 'queued' },
      { execution_id: 'e1', tenant_id: 't2', submitted_version: 4, status: 'queued' },
    ]);
  });

  it('returns the rows of a select', async () => {
    const read = precompiled<Database, { tenant: string }, { execution_id: string }>(['tenant'], (db, p) =>
      db.selectFrom('executions').select('execution_id').where('tenant_id', '=', p.tenant).where('status', 'in', ['queued', 'running']),
    );
    expect((await read(open.db, { tenant: 't2' })).rows).toEqual([{ execution_id: 'e1' }]);
    expect((await read(open.db, { tenant: 'nobody' })).rows).toEqual([]);
  });

  it('builds each run on an instance with plugins (they see every statement)', async () => {
    const read = precompiled<Database, { tenant: string }, { execution_id: string }>(['tenant'], (db, p) =>
      db.selectFrom('executions').select('execution_id').where('tenant_id', '=', p.tenant),
    );
    let seen = 0;
    const counted = open.db.withPlugin({
      transformQuery: (args) => {
        seen++;
        return args.node;
      },
      transformResult: async (args) => args.result,
    });
    expect((await read(counted, { tenant: 't1' })).rows).toEqual([{ execution_id: 'e0' }]);
    expect((await read(open.db, { tenant: 't1' })).rows).toEqual([{ execution_id: 'e0' }]);
    expect((await read(counted, { tenant: 't2' })).rows).toEqual([{ execution_id: 'e1' }]);
    expect(seen).toBe(2);
  });

  it('refuses a placeholder that is not a parameter', async () => {
    const unused = precompiled<Database, { id: string; other: string }>(['id', 'other'], (db, p) =>
      db.selectFrom('executions').select('execution_id').where('execution_id', '=', p.id),
    );
    await expect(async () => unused(open.db, { id: 'e0', other: 'x' })).rejects.toThrow(/a parameter of the statement \(not so: other\)/);
    const inText = precompiled<Database, { id: string }>(['id'], (db, p) => db.selectFrom('executions').select(sql<string>`${sql.raw(p.id)}`.as('x')));
    await expect(async () => inText(open.db, { id: 'e0' })).rejects.toThrow(/a parameter of the statement/);
  });
});
