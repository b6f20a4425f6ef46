import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { EventStore, inlineProjections, migrateToLatest, openDatabase, type OpenDatabase, rebuildInline } from '../../libs/events';
import { rebuildStream } from '../../libs/events/projections/inline/rebuild-inline';
import { ev, type Ids, sessionRows, turn } from '../../libs/events/projections/inline/test/statement-rows';
import { lockStream } from '../../libs/events/stream-lock';
import { createTestDatabase } from '../support/stack';

/**
 * Replay while running, on the real PostgreSQL: a one-statement append (its inline projections'
 * writes CTEs of its statement) takes its snapshot before it gets the stream's lock. An inline
 * rebuild of the stream (`rebuildInline`: deletes and re-folds the stream's rows under that lock,
 * `events` untouched) that commits while the append waits must not make the append's writes
 * target the row versions it deleted (READ COMMITTED skips them: the update would be lost): the
 * append sees the stream's rebuild epoch move and writes in a transaction read after the lock.
 */
describe('an inline rebuild committed while a one-statement append waits for the stream (real PostgreSQL)', () => {
  let database: { url: string; drop(): Promise<void> };
  let open: OpenDatabase;
  beforeAll(async () => {
    database = await createTestDatabase();
    // the rebuild's transaction, the append, the watcher
    open = await openDatabase({ kind: 'postgres', url: database.url, poolSize: 3 });
    await migrateToLatest(open.db);
  });
  afterAll(async () => {
    await open.close();
    await database.drop();
  });

  type Row = Record<string, unknown>;
  const execution = (rows: { executions: unknown[] }, id: string) => (rows.executions as Row[]).find((e) => e.execution_id === id);

  /** Resolves once a statement of this database waits for an advisory lock (the append, behind the rebuild's lock). */
  const aWaiter = async () => {
    for (let i = 0; i < 500; i++) {
      const r = await sql<{ n: number }>`
        select count(*)::int as n from pg_stat_activity
        where datname = current_database() and wait_event_type = 'Lock' and wait_event = 'advisory'`.execute(open.db);
      if (r.rows[0].n > 0) return;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    throw new Error('the append never waited for the lock');
  };

  it('given a rebuild holding the lock, when the commit’s append waits and the rebuild commits, then the append’s rows are a fresh rebuild’s', async () => {
    const store = new EventStore(open.db, { inline: inlineProjections });
    const tenantId = `t-${randomUUID()}`;
    const sessionId = `s-${randomUUID()}`;
    const ids: Ids = { sessionId, execution: (n) => `${sessionId}-e${n}`, turn: (n) => `${sessionId}-u${n}` };
    let version = 0;
    for (const events of [[ev.created(ids), ev.opened(ids)], ...turn(ids, 1), [ev.input(ids, 2)], [ev.started(ids, 2), ev.calling(ids, 2)]]) {
      version = (await store.append({ tenantId, streamId: sessionId, expectedVersion: version, events })).version;
    }
    const before = await sessionRows(open.db, sessionId);
    expect(execution(before, ids.execution(2))).toMatchObject({ status: 'running' });

    // the rebuild takes the stream's lock; the append (one statement: its snapshot now) waits for
    // it; the rebuild deletes and re-folds the stream's rows and commits; the append goes on
    const { appending } = await open.db.transaction().execute(async (trx) => {
      await lockStream(trx, sessionId);
      const appending = store.append({
        tenantId,
        streamId: sessionId,
        expectedVersion: version,
        events: [ev.responded(ids, 2), ev.output(ids, 2), ev.committed(ids, 2)],
      });
      appending.catch(() => undefined); // awaited below
      await aWaiter();
      await rebuildStream(trx, inlineProjections, sessionId);
      return { appending };
    });
    expect((await appending).version).toBe(version + 3);

    const appended = await sessionRows(open.db, sessionId);
    expect(execution(appended, ids.execution(2))).toMatchObject({ status: 'committed' });
    expect((appended.turn_messages as Row[]).map((m) => m.message_id)).toEqual(expect.arrayContaining([`${ids.execution(2)}-m`, `${ids.execution(2)}-r`]));
    expect(appended.turn_messages.length).toBe(before.turn_messages.length + 2);
    const epoch = await open.db.selectFrom('inline_rebuilds').select(['tenant_id', 'epoch']).where('stream_id', '=', sessionId).executeTakeFirst();
    expect(epoch).toEqual({ tenant_id: tenantId, epoch: '1' });

    // a fresh rebuild of the stream (nothing running) gives the same rows
    expect((await rebuildInline({ db: open.db, projections: inlineProjections })).failures).toEqual([]);
    expect(await sessionRows(open.db, sessionId)).toEqual(appended);
  }, 60_000);
});
